"""hippo: a local memory engine for AI coding agents (Brain + Echo in one SQLite file)."""

from __future__ import annotations

__version__ = "0.1.0"

# Not `typing.TYPE_CHECKING`: importing typing costs every call 3 ms, and a call a warm
# server answers imports little else (mypy treats this name the same way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hippo.core import Hippo
    from hippo.retrieve.pipeline import SearchResult


def open(db: Any = None, **flags: Any) -> Hippo:
    """Open hippo with the usual settings resolution (flags > env > config file > default)."""
    from hippo.core import Hippo

    return Hippo.open(db, **flags)


def search(h: Hippo, query: str, **options: Any) -> SearchResult:
    """Search the Brain: `hippo.retrieve.pipeline.search` (limit, types, tiers, tags, since,
    until, projects, include_superseded, as_of, explain, rerank, params, now)."""
    from hippo.retrieve.pipeline import search as run

    return run(h, query, **options)


__all__ = ["__version__", "open", "search"]
