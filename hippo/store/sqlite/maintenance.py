"""SQLite: what maintenance jobs read and write: consolidation, reindex, undo, retire, projects."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteMaintenance:
    def __init__(self, db: Database) -> None:
        self.db = db
