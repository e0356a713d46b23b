"""CLI helpers that do not import Typer, so the search fast path (`hippo.cli.fastpath`) can
use them too."""

from __future__ import annotations

from typing import Any


def hippo_for(root: dict[str, Any], *, db: str | None = None, project: str | None = None,
              embedder: str | None = None) -> Any:
    """Build the Hippo for this call: command flags win over the root's, then env/config."""
    from hippo.core import Hippo

    flags = dict(root)
    for key, value in (("db", db), ("project", project), ("embedder", embedder)):
        if value is not None:
            flags[key] = value
    return Hippo(None, **flags)


def read_text_arg(value: str) -> str:
    """`-` means stdin everywhere."""
    if value == "-":
        import sys

        return sys.stdin.read()
    return value
