"""SQLite: embedding vectors of memories and chunks, and nearest-neighbour search over them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql


class SqliteVectors:
    def __init__(self, db: Sql) -> None:
        self.db = db
