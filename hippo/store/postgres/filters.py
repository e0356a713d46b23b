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


# A new memory's id is SQLite's AUTOINCREMENT: one past the largest id the store ever held
# (a row's, the high-water mark's, or the identity's, which an import moves past every id
# it restored), taken under the writer lock. The mark is a row of `meta`, so a rolled-back
# transaction (a dry run, a killed process) takes no id with it, as in SQLite; a sequence
# would have moved for good. Deleted rows' ids are never given again.
LAST_ID = "memories.last_id"
NEXT_ID = (
    "SELECT greatest(coalesce((SELECT max(id) FROM memories), 0), "
    f"coalesce((SELECT value::bigint FROM meta WHERE key = '{LAST_ID}'), 0), "
    "coalesce(pg_sequence_last_value(pg_get_serial_sequence('memories', 'id')::regclass), 0)"
    ") + 1"
)
MARK_ID = (f"INSERT INTO meta(key, value) VALUES ('{LAST_ID}', ?) ON CONFLICT (key) "
           "DO UPDATE SET value = excluded.value "
           "WHERE meta.value::bigint < excluded.value::bigint")


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
                           secure_delete="", optimize_text="", next_id=NEXT_ID,
                           mark_id=MARK_ID, collate=' COLLATE "C"',
                           as_json="::jsonb")
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
