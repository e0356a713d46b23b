"""hippo: a local memory engine for AI coding agents (Brain + Echo in one SQLite file)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from hippo.core import Hippo


def open(db: Any = None, **flags: Any) -> Hippo:  # noqa: A001 - mirrors sqlite3.connect
    """Open hippo with the usual settings resolution (flags > env > config file > default)."""
    from hippo.core import Hippo

    return Hippo.open(db, **flags)


__all__ = ["__version__", "open"]
