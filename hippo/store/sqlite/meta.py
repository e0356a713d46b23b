"""SQLite: small named values, in the `meta` table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

GET = "SELECT value FROM meta WHERE key = ?"
GET_MANY = "SELECT key, value FROM meta WHERE key IN (SELECT value FROM json_each(?))"
SET = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)"
SET_DEFAULT = "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)"
DELETE = "DELETE FROM meta WHERE key = ?"


class SqliteMeta:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def get(self, key: str) -> str | None:
        value = self.db.scalar(GET, (key,))
        return None if value is None else str(value)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        import json

        return {r["key"]: str(r["value"]) for r in self.db.rows(GET_MANY, (json.dumps(list(keys)),))}

    def set(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute(DELETE, (key,))
        else:
            self.db.execute(SET, (key, value))

    def set_many(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            self.db.execute(SET, (key, value))

    def set_default(self, key: str, value: str) -> None:
        self.db.execute(SET_DEFAULT, (key, value))
