"""SQLite: the append-only history of every change to a memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

INSERT = (
    "INSERT INTO audit(memory_id, run_id, actor, action, at, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
HISTORY = "SELECT id, run_id, actor, action, at, before, after FROM audit WHERE memory_id = ? ORDER BY id"
PURGE_TEXT = "UPDATE audit SET before = NULL, after = NULL WHERE memory_id = ?"
ONCE_USED = ("SELECT DISTINCT memory_id FROM audit WHERE memory_id IN "
             "(SELECT value FROM json_each(?))")


class SqliteAudit:
    def __init__(self, db: Sql) -> None:
        # Weak: the store holds its repositories, and a store nobody holds must close
        # (its connection released at once, as before there were repositories).
        self.db = db

    def log(self, memory_id: int, action: str, *, actor: str, at: str, before: str | None,
            after: str | None, run_id: str | None) -> None:
        self.db.execute(INSERT, (memory_id, run_id, actor, action, at, before, after))

    def history(self, memory_id: int) -> list[Row]:
        return self.db.rows(HISTORY, (memory_id,))

    def erase_texts(self, memory_id: int) -> None:
        self.db.execute(PURGE_TEXT, (memory_id,))

    def once_used(self, ids: Iterable[int]) -> set[int]:
        import orjson

        listed = orjson.dumps(sorted(ids)).decode()
        return {r[0] for r in self.db.execute(ONCE_USED, (listed,))}
