"""SQLite: what the context layers read: the floor's rules and guidance, recall, sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteContextRows:
    def __init__(self, db: Database) -> None:
        self.db = db
