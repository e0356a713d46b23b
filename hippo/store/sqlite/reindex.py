"""SQLite: what maintenance does to vec0 its own way (`hippo.store.reindex.Reindex`).

vec0 tables carry their filter columns (a memory's type and project, a chunk's project,
session and start): a KNN filters on them, a project's move updates them, and a reindex's
side table (`<table>_next`, with `+content_hash`) copies them beside each vector."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.reindex import Reindex
from hippo.store.vectors import TABLES

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

SCAN = "SELECT memory_id, type, project, embedding FROM memories_vec"
CHUNKS_MOVED = "UPDATE echo_vec SET project = ?2 WHERE project = ?1"
CHUNK_MOVED = "UPDATE echo_vec SET project = ?2 WHERE chunk_id = ?1"
TABLE_SQL = "SELECT sql FROM sqlite_master WHERE name = ?"
HASH_COL = ", +content_hash TEXT"
DROP = "DROP TABLE {table}"
DROP_IF_EXISTS = "DROP TABLE IF EXISTS {table}"
IN_KEYS = " WHERE {key} IN (SELECT value FROM json_each(?))"


class Tables:
    """The SQL of one store's live and side vec0 tables (names fixed by code)."""

    def __init__(self, store: str) -> None:
        from hippo.store.sqlite.vectors import META_COLUMNS

        self.live, self.key, _ = TABLES[store]
        self.meta = [c.split()[0] for c in META_COLUMNS[store].split(",")]
        self.next = f"{self.live}_next"
        cols = ", ".join(self.meta)
        self.read_live = f"SELECT {self.key}, {cols} FROM {self.live}"
        self.read_live_keys = self.read_live + IN_KEYS.format(key=self.key)
        self.read_next = f"SELECT {self.key}, content_hash, {cols} FROM {self.next}"
        self.delete_next = f"DELETE FROM {self.next} WHERE {self.key} = ?"
        self.insert_next = (f"INSERT INTO {self.next}({self.key}, embedding, {cols}, "
                            f"content_hash) VALUES ({', '.join('?' * (len(self.meta) + 3))})")
        self.copy = (f"INSERT INTO {self.live}({self.key}, embedding, {cols}) "
                     f"SELECT {self.key}, embedding, {cols} FROM {self.next}")


@functools.cache
def _tables(store: str) -> Tables:
    return Tables(store)


def _keys(keys: Sequence[int]) -> str:
    import orjson

    return orjson.dumps(list(keys)).decode()


class SqliteReindex(Reindex):
    db: Sql


    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        yield from self.db.execute(SCAN)


    def move_chunk_vectors(self, src: str, dst: str) -> None:
        if self.db.has_table("echo_vec"):
            self.db.execute(CHUNKS_MOVED, (src, dst))

    def set_chunk_vector_project(self, chunk_id: int, project: str) -> None:
        self.db.execute(CHUNK_MOVED, (chunk_id, project))

    def declares(self, store: str, dimensions: int) -> bool:
        sql = self.db.scalar(TABLE_SQL, (_tables(store).live,)) or ""
        return f"float[{dimensions}]" in sql

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        t = _tables(store)
        rows = (self.db.execute(t.read_live) if keys is None
                else self.db.execute(t.read_live_keys, (_keys(keys),)))
        return {r[0]: tuple(r[1:]) for r in rows}

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        return {r[0]: (r[1], tuple(r[2:])) for r in self.db.execute(_tables(store).read_next)}

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        t = _tables(store)
        self.db.execute(t.delete_next, (key,))
        self.db.execute(t.insert_next, (key, vector, *metadata, content_hash))

    def create_side_table(self, store: str, dim: int, *, drop_old: bool) -> None:
        from hippo.store.sqlite.vectors import vec_table_ddl

        t = _tables(store)
        if drop_old:
            self.db.execute(DROP_IF_EXISTS.format(table=t.next))
        self.db.execute(vec_table_ddl(store, dim, t.next, HASH_COL))

    def swap_side_table(self, store: str, dim: int) -> None:
        from hippo.store.sqlite.vectors import vec_table_ddl

        t = _tables(store)
        self.db.execute(DROP.format(table=t.live))
        self.db.execute(vec_table_ddl(store, dim))
        self.db.execute(t.copy)
        self.db.execute(DROP.format(table=t.next))
