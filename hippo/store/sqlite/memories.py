"""SQLite: brain memories: insert, read, update, status, provenance links."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteMemories:
    def __init__(self, db: Database) -> None:
        self.db = db
