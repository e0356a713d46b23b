"""SQLite: directories seen and the project each belongs to (worktrees share one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteProjectDirs:
    def __init__(self, db: Database) -> None:
        self.db = db
