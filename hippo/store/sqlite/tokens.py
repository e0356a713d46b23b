"""SQLite: per-token matrices for late interaction (MaxSim), of stored texts and queries."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql


class SqliteTokenMatrices:
    def __init__(self, db: Sql) -> None:
        self.db = db
