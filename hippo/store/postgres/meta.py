"""PostgreSQL: small named values, in the `meta` table.

On a team store, extraction's watermark is each member's own (`PER_USER`): stored under
`user/<role>/<key>`, which the row-level security of `meta` lets only that role read or
write, so every member's `hippo extract` learns from their own sessions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

GET = "SELECT value FROM meta WHERE key = ?"
GET_MANY = "SELECT key, value FROM meta WHERE key = ANY(?)"
SET = ("INSERT INTO meta(key, value) VALUES (?, ?) "
       "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
SET_DEFAULT = "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"
DELETE = "DELETE FROM meta WHERE key = ?"
PER_USER = frozenset({"extract.last_chunk_id"})
ROLE = "SELECT current_user"


def per_user_key(role: str, key: str) -> str:
    return f"user/{role}/{key}"


class PgMeta:
    def __init__(self, db: PgSql) -> None:
        self.db = db
        self._role: str | None = None

    def _key(self, key: str) -> str:
        """Where `key` is stored: a member's own row on a team store (`PER_USER`)."""
        if key not in PER_USER or not self.db.team:
            return key
        if self._role is None:
            self._role = str(self.db.scalar(ROLE))
        return per_user_key(self._role, key)

    def get(self, key: str) -> str | None:
        value = self.db.scalar(GET, (self._key(key),))
        return None if value is None else str(value)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        stored = {self._key(k): k for k in keys}
        return {stored[r["key"]]: str(r["value"])
                for r in self.db.rows(GET_MANY, (list(stored),))}

    def set(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute(DELETE, (self._key(key),))
        else:
            self.db.execute(SET, (self._key(key), value))

    def set_many(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            self.db.execute(SET, (self._key(key), value))

    def set_default(self, key: str, value: str) -> None:
        self.db.execute(SET_DEFAULT, (self._key(key), value))
