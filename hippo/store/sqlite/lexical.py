"""SQLite: full-text search over memories and chunks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql


class SqliteLexical:
    def __init__(self, db: Sql) -> None:
        self.db = db
