"""Small named values, in the `meta` table: job watermarks, each store's embedding model, flags.

On a PostgreSQL team store, extraction's watermark is each member's own (`PER_USER`):
stored under `user/<role>/<key>`, which the row-level security of `meta` lets only that
role read or write, so every member's `hippo extract` learns from their own sessions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.sql import Sql

GET = "SELECT value FROM meta WHERE key = ?"
GET_MANY = "SELECT key, value FROM meta WHERE key {in_list}"
SET = ("INSERT INTO meta(key, value) VALUES (?, ?) "
       "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
DELETE = "DELETE FROM meta WHERE key = ?"
PER_USER = frozenset({"extract.last_chunk_id"})
ROLE = "SELECT current_user"


def per_user_key(role: str, key: str) -> str:
    return f"user/{role}/{key}"


class Meta(Repository):
    """Small named values: job watermarks, each store's embedding model, flags."""

    def __init__(self, db: Sql) -> None:
        super().__init__(db)
        self._role: str | None = None

    def _key(self, key: str) -> str:
        """Where `key` is stored: a member's own row on a team store (`PER_USER`)."""
        if key not in PER_USER or not self.db.team:
            return key
        if self._role is None:
            self._role = str(self.db.scalar(ROLE))
        return per_user_key(self._role, key)

    def get(self, key: str) -> str | None:
        """The value stored under `key`, or None."""
        value = self.db.scalar(GET, (self._key(key),))
        return None if value is None else str(value)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The values of those of `keys` that are stored."""
        stored = {self._key(k): k for k in keys}
        found = self.db.rows(self._sql(GET_MANY),
                             (self.db.dialect.listed(list(stored)),))
        return {stored[r["key"]]: str(r["value"]) for r in found}

    def set(self, key: str, value: str | None) -> None:
        """Store `value` under `key` (None removes it)."""
        if value is None:
            self.db.execute(DELETE, (self._key(key),))
        else:
            self.db.execute(SET, (self._key(key), value))

    def set_many(self, values: Mapping[str, str]) -> None:
        """Store each value under its key."""
        for key, value in values.items():
            self.set(key, value)
