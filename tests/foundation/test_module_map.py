"""docs/DEVELOPING.md lists every module of hippo, one line each, and no module that is gone."""

from __future__ import annotations

import re
from pathlib import Path

import hippo

ROOT = Path(hippo.__file__).parent
MAP = ROOT.parent / "docs" / "DEVELOPING.md"
ROW = re.compile(r"^\| `(hippo/[^`]+\.py)` \| (.+) \|$", re.MULTILINE)


def test_every_module_has_one_line() -> None:
    listed = ROW.findall(MAP.read_text(encoding="utf-8"))
    names = [path for path, _ in listed]
    modules = sorted(str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*.py"))
    assert sorted(set(modules) - set(names)) == [], "modules missing from the map"
    assert sorted(set(names) - set(modules)) == [], "the map names modules that are gone"
    assert len(names) == len(set(names)), "a module listed twice"
    assert all(what.strip() for _, what in listed)
