"""SQLite: the counts `hippo stats` shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteStats:
    def __init__(self, db: Database) -> None:
        self.db = db
