"""SQLite: a reindex's side vec0 table (`<table>_next`, each row carrying the content hash
it was computed from) beside each store's live one; part of `SqliteMaintenance`."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

# store -> the table holding the text each vector was computed from
CONTENT = {"brain": "memories", "echo": "echo_chunks"}
HASH_COL = ", +content_hash TEXT"
COUNT = "SELECT count(*) FROM {table}"
DROP = "DROP TABLE {table}"
DROP_IF_EXISTS = "DROP TABLE IF EXISTS {table}"
IN_KEYS = " WHERE {key} IN (SELECT value FROM json_each(?))"


class Tables:
    """The SQL of one store's live and side vec0 tables (names fixed by code)."""

    def __init__(self, store: str) -> None:
        from hippo.store.sqlite.vectors import VEC_TABLES

        self.store = store
        self.live, self.key, meta = VEC_TABLES[store]
        self.meta = [c.split()[0] for c in meta.split(",")]
        self.next = f"{self.live}_next"
        self.content = CONTENT[store]
        cols = ", ".join(self.meta)
        self.read_live = f"SELECT {self.key}, {cols} FROM {self.live}"
        self.read_live_keys = self.read_live + IN_KEYS.format(key=self.key)
        self.read_next = f"SELECT {self.key}, content_hash, {cols} FROM {self.next}"
        self.texts = (f"SELECT id, text, content_hash FROM {self.content} "
                      "WHERE id IN (SELECT value FROM json_each(?))")
        self.hashes = f"SELECT id, content_hash FROM {self.content}"
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


class SqliteReindexTables:
    db: Sql

    def vector_count(self, store: str) -> int:
        return int(self.db.scalar(COUNT.format(table=_tables(store).live)))

    def side_count(self, store: str) -> int:
        return int(self.db.scalar(COUNT.format(table=_tables(store).next)))

    def has_side_table(self, store: str) -> bool:
        return self.db.has_table(_tables(store).next)

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        t = _tables(store)
        rows = (self.db.execute(t.read_live) if keys is None
                else self.db.execute(t.read_live_keys, (_keys(keys),)))
        return {r[0]: tuple(r[1:]) for r in rows}

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        return {r[0]: (r[1], tuple(r[2:])) for r in self.db.execute(_tables(store).read_next)}

    def content_hashes(self, store: str) -> list[tuple[int, str]]:
        return [(k, h) for k, h in self.db.execute(_tables(store).hashes)]

    def texts(self, store: str, keys: Sequence[int]) -> list[tuple[int, str, str]]:
        return [(r[0], r[1], r[2])
                for r in self.db.execute(_tables(store).texts, (_keys(keys),))]

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        t = _tables(store)
        self.db.execute(t.delete_next, (key,))
        self.db.execute(t.insert_next, (key, vector, *metadata, content_hash))

    def drop_side_row(self, store: str, key: int) -> None:
        self.db.execute(_tables(store).delete_next, (key,))

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
