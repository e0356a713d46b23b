"""SQLite's `Dialect` (`hippo.store.clauses`): how its SQL spells what the repositories,
written once, leave to each backend (a list as one parameter: JSON text read by
`json_each`; a tag test; the clock; pragmas). Its parameters are the store's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hippo.store import clauses


def _within(column: str, values: Sequence[Any], params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({','.join('?' * len(values))})"


def _listed(values: Sequence[Any]) -> str:
    import orjson

    return orjson.dumps(list(values)).decode()


SQLITE = clauses.Dialect(true="1", false="0",
                         tagged="EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)",
                         now="strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", within=_within,
                         listed=_listed, in_list="IN (SELECT value FROM json_each(?))")
# Active, not replaced, its validity not over: what a layer may load at all.
CURRENT = clauses.current(SQLITE)
