"""SQLite: the spend guard's state per provider: calls, tokens, the open circuit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteSpend:
    def __init__(self, db: Database) -> None:
        self.db = db
