"""SQLite: the append-only history of every change to a memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteAudit:
    def __init__(self, db: Database) -> None:
        self.db = db
