"""PostgreSQL: small named values, in the `meta` table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

GET = "SELECT value FROM meta WHERE key = %s"
GET_MANY = "SELECT key, value FROM meta WHERE key = ANY(%s)"
SET = ("INSERT INTO meta(key, value) VALUES (%s, %s) "
       "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
SET_DEFAULT = "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING"
DELETE = "DELETE FROM meta WHERE key = %s"


class PgMeta:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def get(self, key: str) -> str | None:
        value = self.db.scalar(GET, (key,))
        return None if value is None else str(value)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        return {r["key"]: str(r["value"]) for r in self.db.rows(GET_MANY, (list(keys),))}

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
