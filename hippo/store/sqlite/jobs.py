"""SQLite: locks and runs of the maintenance jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteJobs:
    def __init__(self, db: Database) -> None:
        self.db = db
