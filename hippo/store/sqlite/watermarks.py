"""SQLite: how far each transcript file has been read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteWatermarks:
    def __init__(self, db: Database) -> None:
        self.db = db
