"""SQLite: cached embeddings (and token matrices) in the `embed_cache` table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import apsw

from hippo.store.sqlite.errors import translate

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

GET = "SELECT vector FROM embed_cache WHERE model = ? AND content_hash = ?"
GET_MANY = ("SELECT content_hash, vector FROM embed_cache WHERE model = ? "
            "AND content_hash IN ({marks})")
PUT = ("INSERT OR IGNORE INTO embed_cache(model, content_hash, vector, created_at) "
       "VALUES (?, ?, ?, ?)")
# An entry encoded again because the cached one was missing or damaged replaces it.
REPLACE = ("INSERT OR REPLACE INTO embed_cache(model, content_hash, vector, created_at) "
           "VALUES (?, ?, ?, ?)")
BATCH = 500  # hashes per IN (...) list


def get(db: Sql, model: str, content_hash: str) -> bytes | None:
    blob = db.scalar(GET, (model, content_hash))
    return None if blob is None else bytes(blob)


def get_many(db: Sql, model: str, hashes: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """(hash, blob) of the cached ones, batch after batch, in the table's order."""
    for start in range(0, len(hashes), BATCH):
        part = hashes[start : start + BATCH]
        sql = GET_MANY.format(marks=",".join("?" * len(part)))
        yield from db.execute(sql, (model, *part))


def put(db: Sql, model: str, items: Iterable[tuple[str, bytes]], created_at: str,
        replace: bool = False) -> None:
    sql = REPLACE if replace else PUT
    try:
        for h, blob in items:
            db.execute(sql, (model, h, blob, created_at))
    except apsw.Error as exc:  # no backend error type leaves the store
        raise translate(exc, db.path) from exc


class SqliteEmbedCache:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def get(self, model: str, content_hash: str) -> bytes | None:
        return get(self.db, model, content_hash)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        return dict(get_many(self.db, model, hashes))

    def put_many(self, model: str, vectors: Iterable[tuple[str, bytes]] | Mapping[str, bytes],
                 created_at: str) -> None:
        items = vectors.items() if isinstance(vectors, Mapping) else vectors
        put(self.db, model, items, created_at)


class SqliteTokenMatrices(SqliteEmbedCache):
    """Token matrices are cached in the same table, under the model id plus a format
    suffix: the same reads, and a write that may keep what is there."""

    def put(self, model: str, matrices: Iterable[tuple[str, bytes]], created_at: str, *,
            replace: bool = True) -> None:
        put(self.db, model, matrices, created_at, replace=replace)
