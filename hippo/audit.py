"""Append-only audit log: who changed which memory, when, and the record before and after."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

INSERT = (
    "INSERT INTO audit(memory_id, run_id, actor, action, at, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
HISTORY = "SELECT id, run_id, actor, action, at, before, after FROM audit WHERE memory_id = ? ORDER BY id"
PURGE_TEXT = "UPDATE audit SET before = NULL, after = NULL WHERE memory_id = ?"


def _dump(record: dict[str, Any] | None) -> str | None:
    if record is None:
        return None
    import orjson

    return orjson.dumps(record).decode()


def log(db: Database, memory_id: int, action: str, *, actor: str,
        before: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
        run_id: str | None = None, at: str | None = None) -> None:
    db.execute(INSERT, (memory_id, run_id, actor, action, at or now_iso(), _dump(before),
                        _dump(after)))


def history(db: Database, memory_id: int) -> list[dict[str, Any]]:
    import orjson

    out = []
    for row in db.rows(HISTORY, (memory_id,)):
        for key in ("before", "after"):
            row[key] = orjson.loads(row[key]) if row[key] else None
        out.append(row)
    return out
