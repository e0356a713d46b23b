"""SQLite: the checks `hippo doctor` runs on the store, and their repairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteHealth:
    def __init__(self, db: Database) -> None:
        self.db = db
