"""No module under hippo/ is over 400 lines: split a module by responsibility first."""

from __future__ import annotations

from pathlib import Path

import hippo

MAX_LINES = 400
ROOT = Path(hippo.__file__).resolve().parent


def test_no_module_is_over_400_lines() -> None:
    sizes = {str(p.relative_to(ROOT.parent)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(ROOT.rglob("*.py"))}
    assert sizes
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
