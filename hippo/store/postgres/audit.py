"""PostgreSQL: the append-only history of every change to a memory, and who made it
(`by_user`: HIPPO_USER as the connection set it, else the database role; its default).
On a team store it is always the role, and a member may only erase a row's texts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

INSERT = (
    "INSERT INTO audit(memory_id, run_id, actor, action, at, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
HISTORY = ("SELECT id, run_id, actor, action, at, before, after FROM audit "
           "WHERE memory_id = ? ORDER BY id")
PURGE_TEXT = "UPDATE audit SET before = NULL, after = NULL WHERE memory_id = ?"
ONCE_USED = "SELECT DISTINCT memory_id FROM audit WHERE memory_id = ANY(?)"


class PgAudit:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def log(self, memory_id: int, action: str, *, actor: str, at: str, before: str | None,
            after: str | None, run_id: str | None) -> None:
        self.db.execute(INSERT, (memory_id, run_id, actor, action, at, before, after))

    def history(self, memory_id: int) -> list[Row]:
        return self.db.rows(HISTORY, (memory_id,))

    def erase_texts(self, memory_id: int) -> None:
        self.db.execute(PURGE_TEXT, (memory_id,))

    def once_used(self, ids: Iterable[int]) -> set[int]:
        listed = sorted(ids)
        if not listed:
            return set()
        return {int(r["memory_id"]) for r in self.db.rows(ONCE_USED, (listed,))}
