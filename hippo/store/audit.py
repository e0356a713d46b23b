"""The append-only history of every change to a memory, in the `audit` table.

On PostgreSQL each entry also says who made it (`by_user`: HIPPO_USER as the connection set
it, else the database role; its default); on a team store it is always the role, and a
member may only erase a row's texts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row

INSERT = ("INSERT INTO audit(memory_id, run_id, actor, action, at, before, after) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)")
HISTORY = ("SELECT id, run_id, actor, action, at, before, after FROM audit "
           "WHERE memory_id = ? ORDER BY id")
PURGE_TEXT = "UPDATE audit SET before = NULL, after = NULL WHERE memory_id = ?"
ONCE_USED = "SELECT DISTINCT memory_id FROM audit WHERE memory_id {in_list}"


class Audit(Repository):
    """The append-only history of every change to a memory."""

    def log(self, memory_id: int, action: str, *, actor: str, at: str, before: str | None,
            after: str | None, run_id: str | None) -> None:
        """Append one entry (`before`/`after`: the records as JSON text, or None)."""
        self.db.execute(INSERT, (memory_id, run_id, actor, action, at, before, after))

    def history(self, memory_id: int) -> list[Row]:
        """id, run_id, actor, action, at, before, after of the memory's entries, in order."""
        return self.db.rows(HISTORY, (memory_id,))

    def erase_texts(self, memory_id: int) -> None:
        """Blank the records the memory's entries hold (a purge); the entries stay."""
        self.db.execute(PURGE_TEXT, (memory_id,))

    def once_used(self, ids: Iterable[int]) -> set[int]:
        """Of `ids`, those the history holds an entry for."""
        listed = sorted(ids)
        if not listed:
            return set()
        found = self.db.rows(self._sql(ONCE_USED), (self.db.dialect.listed(listed),))
        return {int(r["memory_id"]) for r in found}
