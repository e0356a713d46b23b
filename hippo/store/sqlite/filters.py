"""SQLite: the filters of `hippo.store.memories` (`MemoryFilter`) and `hippo.store.filters`
(`SearchFilters`, `EchoFilters`) as WHERE clauses and their bound parameters
(`hippo.store.clauses`, in SQLite's spelling)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store import clauses
from hippo.store.clauses import UNVERIFIED

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters
    from hippo.store.memories import MemoryFilter

__all__ = ["CURRENT", "UNVERIFIED", "chunk_where", "memory_where", "where"]


def _within(column: str, values: Sequence[Any], params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({','.join('?' * len(values))})"


def _listed(values: Sequence[Any]) -> str:
    import orjson

    return orjson.dumps(list(values)).decode()


SQLITE = clauses.Dialect(param="?", true="1", false="0",
                         tagged="EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)",
                         now="strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", within=_within,
                         listed=_listed, in_list="IN (SELECT value FROM json_each(?))")
# Active, not replaced, its validity not over: what a layer may load at all.
CURRENT = clauses.current(SQLITE)


def where(f: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) for `f`, and its parameters."""
    return clauses.where(SQLITE, f, alias)


def memory_where(f: SearchFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) of active memories `f` allows."""
    return clauses.memory_where(SQLITE, f, alias)


def chunk_where(f: EchoFilters) -> tuple[str, list[Any]]:
    """The WHERE clause over `echo_chunks` c joined with `echo_sessions` e."""
    return clauses.chunk_where(SQLITE, f)
