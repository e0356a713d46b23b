"""SQLite: vectors already computed, by model and content hash."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql


class SqliteEmbedCache:
    def __init__(self, db: Sql) -> None:
        self.db = db
