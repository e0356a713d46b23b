"""SQLite: echo: transcript sessions and their chunks, verbatim."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


class SqliteChunks:
    def __init__(self, db: Database) -> None:
        self.db = db
