"""PostgreSQL: the filters of `hippo.store.memories` (`MemoryFilter`) and
`hippo.store.filters` (`SearchFilters`, `EchoFilters`) as WHERE clauses with `?`
parameters. Lists travel as one array parameter (`= ANY(?)`), tags as JSON text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store import clauses
from hippo.store.chunks import SHARED_KEY, SHARED_ON
from hippo.store.clauses import UNVERIFIED
from hippo.store.postgres.schema import USER

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters
    from hippo.store.memories import MemoryFilter

# Echo is its ingester's: a session (alias e) is seen by its owner, or by everyone once the
# team turned sharing on (meta `echo.shared`, `hippo config --set echo.shared=on`).
SHARED = f"EXISTS (SELECT 1 FROM meta WHERE key = '{SHARED_KEY}' AND value = '{SHARED_ON}')"
OWN = f"e.owner = {USER}"
VISIBLE = f"({OWN} OR {SHARED})"

__all__ = ["CURRENT", "OWN", "SHARED", "UNVERIFIED", "VISIBLE", "chunk_where", "memory_where",
           "where"]


def _within(column: str, values: Sequence[Any], params: list[Any]) -> str:
    params.append(list(values))
    return f"{column} = ANY(?)"


# `tags` is a JSON array as text (hippo writes nothing else there).
POSTGRES = clauses.Dialect(param="?", true="TRUE", false="FALSE",
                           tagged="jsonb_exists({alias}.tags::jsonb, ?)", within=_within,
                           now=("to_char(now() AT TIME ZONE 'UTC', "
                                "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"),
                           listed=list, in_list="= ANY(?)", name="postgres",
                           visible=VISIBLE, own=OWN,
                           defer_references="SET CONSTRAINTS ALL DEFERRED",
                           bytewise=' COLLATE "C"', as_json="::jsonb")
# Active, not replaced, its validity not over: what a layer may load at all.
CURRENT = clauses.current(POSTGRES)


def where(f: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) for `f`, and its parameters."""
    return clauses.where(POSTGRES, f, alias)


def memory_where(f: SearchFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) of active memories `f` allows."""
    return clauses.memory_where(POSTGRES, f, alias)


def chunk_where(f: EchoFilters) -> tuple[str, list[Any]]:
    """The WHERE clause over `echo_chunks` c joined with `echo_sessions` e: what `f`
    allows of the sessions this user may see (`VISIBLE`)."""
    return clauses.chunk_where(POSTGRES, f, first=VISIBLE)
