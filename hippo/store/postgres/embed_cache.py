"""PostgreSQL: cached embeddings (and token matrices) in the `embed_cache` table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

GET = "SELECT vector FROM embed_cache WHERE model = ? AND content_hash = ?"
GET_MANY = ("SELECT content_hash, vector FROM embed_cache WHERE model = ? "
            "AND content_hash = ANY(?)")
# One statement per batch: the pairs travel as two arrays.
PUT = ("INSERT INTO embed_cache(model, content_hash, vector, created_at) "
       "SELECT ?, t.h, t.v, ? FROM unnest(?::text[], ?::bytea[]) AS t(h, v) "
       "ON CONFLICT (model, content_hash) DO NOTHING")
# An entry encoded again because the cached one was missing or damaged replaces it.
REPLACE = ("INSERT INTO embed_cache(model, content_hash, vector, created_at) "
           "SELECT ?, t.h, t.v, ? FROM unnest(?::text[], ?::bytea[]) AS t(h, v) "
           "ON CONFLICT (model, content_hash) DO UPDATE "
           "SET vector = excluded.vector, created_at = excluded.created_at")
BATCH = 500  # pairs per statement


def get(db: PgSql, model: str, content_hash: str) -> bytes | None:
    blob = db.scalar(GET, (model, content_hash))
    return None if blob is None else bytes(blob)


def get_many(db: PgSql, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for start in range(0, len(hashes), BATCH):
        part = list(hashes[start : start + BATCH])
        for h, blob in db.execute(GET_MANY, (model, part)):
            out[h] = bytes(blob)
    return out


def put(db: PgSql, model: str, items: Iterable[tuple[str, bytes]], created_at: str,
        replace: bool = False) -> None:
    """Write the pairs; a hash given twice is written once (the first, or with `replace`
    the last, as SQLite's INSERT OR IGNORE / OR REPLACE one row after another)."""
    pairs: dict[str, bytes] = {}
    for h, blob in items:
        if replace or h not in pairs:
            pairs[h] = bytes(blob)
    keys = list(pairs)
    sql = REPLACE if replace else PUT
    for start in range(0, len(keys), BATCH):
        part = keys[start : start + BATCH]
        db.execute(sql, (model, created_at, part, [pairs[h] for h in part]))


class PgEmbedCache:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def get(self, model: str, content_hash: str) -> bytes | None:
        return get(self.db, model, content_hash)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        return get_many(self.db, model, hashes)

    def put_many(self, model: str, vectors: Iterable[tuple[str, bytes]] | Mapping[str, bytes],
                 created_at: str) -> None:
        items = vectors.items() if isinstance(vectors, Mapping) else vectors
        put(self.db, model, items, created_at)


class PgTokenMatrices(PgEmbedCache):
    """Token matrices are cached in the same table, under the model id plus a format
    suffix: the same reads, and a write that may keep what is there."""

    def put(self, model: str, matrices: Iterable[tuple[str, bytes]], created_at: str, *,
            replace: bool = True) -> None:
        put(self.db, model, matrices, created_at, replace=replace)
