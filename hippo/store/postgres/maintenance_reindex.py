"""PostgreSQL: a reindex's side table (`<table>_next`: key, vector, and the content hash it
was computed from) beside each store's live vector table; part of `PgMaintenance`.

The side table gets the live table's indexes (its HNSW index: built as the batches are
written, while searches keep using the live table). The swap, in the reindex's last
transaction, drops the live table and renames the side table (its indexes and
constraints too) into its place: a few catalog changes, no copy and no index build while
searches wait. The vector tables carry no metadata columns (filters join the rows they
belong to), so each vector's metadata here is `()`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql

from hippo.store.postgres.vector import Vec

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

# store -> (live vector table, its key, the table holding the texts)
TABLES = {"brain": ("memories_vec", "memory_id", "memories"),
          "echo": ("echo_vec", "chunk_id", "echo_chunks")}
SUFFIX = "_next"
SECURE = "SELECT hippo_team_secure(?)"
COUNT = "SELECT count(*) FROM {table}"
SIDE_TABLE = ("CREATE TABLE {next} ({key} BIGINT PRIMARY KEY REFERENCES {content}(id) "
              "ON DELETE CASCADE, embedding vector({dim}) NOT NULL, content_hash TEXT NOT NULL)")
DROP_IF_EXISTS = "DROP TABLE IF EXISTS {table}"
# A table's secondary indexes (name, definition), and its key and reference constraints.
INDEXES = ("SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i "
           "JOIN pg_class c ON c.oid = i.indexrelid "
           "WHERE i.indrelid = to_regclass(?) AND NOT i.indisprimary ORDER BY c.relname")
CONSTRAINTS = ("SELECT contype, conname FROM pg_constraint WHERE conrelid = to_regclass(?) "
               "AND contype IN ('p', 'f') ORDER BY conname")
# pg_get_indexdef's text: CREATE [UNIQUE] INDEX name ON schema.table USING method (...)
INDEX_DEF = re.compile(r"^CREATE (UNIQUE )?INDEX (\S+) ON (\S+) (USING .*)$", re.DOTALL)
COPY_INDEX = "CREATE {unique}INDEX {name} ON {table} "
DROP = "DROP TABLE {table}"
RENAME_TABLE = "ALTER TABLE {old} RENAME TO {new}"
DROP_HASH = "ALTER TABLE {table} DROP COLUMN content_hash"
RENAME_CONSTRAINT = "ALTER TABLE {table} RENAME CONSTRAINT {old} TO {new}"
RENAME_INDEX = "ALTER INDEX {old} RENAME TO {new}"


class Tables:
    """The SQL of one store's live and side tables (names fixed by code)."""

    def __init__(self, store: str) -> None:
        self.store = store
        self.live, self.key, self.content = TABLES[store]
        self.next = self.live + SUFFIX
        self.count_live = COUNT.format(table=self.live)
        self.count_next = COUNT.format(table=self.next)
        self.read_live = f"SELECT {self.key} FROM {self.live}"
        self.read_live_keys = self.read_live + f" WHERE {self.key} = ANY(?)"
        self.read_next = f"SELECT {self.key}, content_hash FROM {self.next}"
        self.texts = f"SELECT id, text, content_hash FROM {self.content} WHERE id = ANY(?)"
        self.hashes = f"SELECT id, content_hash FROM {self.content}"
        self.delete_next = f"DELETE FROM {self.next} WHERE {self.key} = ?"
        self.upsert_next = (f"INSERT INTO {self.next}({self.key}, embedding, content_hash) "
                            f"VALUES (?, ?, ?) ON CONFLICT ({self.key}) DO UPDATE SET "
                            "embedding = excluded.embedding, content_hash = excluded.content_hash")


@functools.cache
def _tables(store: str) -> Tables:
    return Tables(store)


def _ident(name: str) -> sql.Identifier:
    return sql.Identifier(name)


class PgReindexTables:
    db: PgSql

    def vector_count(self, store: str) -> int:
        return int(self.db.scalar(_tables(store).count_live))

    def side_count(self, store: str) -> int:
        return int(self.db.scalar(_tables(store).count_next))

    def has_side_table(self, store: str) -> bool:
        return self.db.has_table(_tables(store).next)

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        t = _tables(store)
        rows = (self.db.execute(t.read_live) if keys is None
                else self.db.execute(t.read_live_keys, ([int(k) for k in keys],)))
        return {int(r[0]): () for r in rows}

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        return {int(r[0]): (r[1], ()) for r in self.db.execute(_tables(store).read_next)}

    def content_hashes(self, store: str) -> list[tuple[int, str]]:
        return [(int(k), h) for k, h in self.db.execute(_tables(store).hashes)]

    def texts(self, store: str, keys: Sequence[int]) -> list[tuple[int, str, str]]:
        return [(int(r[0]), r[1], r[2]) for r in
                self.db.execute(_tables(store).texts, ([int(k) for k in keys],))]

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        self.db.execute(_tables(store).upsert_next, (key, Vec(vector), content_hash))

    def drop_side_row(self, store: str, key: int) -> None:
        self.db.execute(_tables(store).delete_next, (key,))

    def create_side_table(self, store: str, dim: int, *, drop_old: bool) -> None:
        t = _tables(store)
        if drop_old:
            self.db.execute(DROP_IF_EXISTS.format(table=t.next))
        if self.db.has_table(t.next):
            return
        self.db.execute(SIDE_TABLE.format(next=t.next, key=t.key, content=t.content,
                                          dim=int(dim)))
        for index in self.db.rows(INDEXES, (t.live,)):
            found = INDEX_DEF.match(index["def"])
            if found:  # the live table's index, on the side table, named <name>_next
                head = sql.SQL(COPY_INDEX).format(
                    unique=sql.SQL(found[1] or ""), name=_ident(index["name"] + SUFFIX),
                    table=_ident(t.next))
                self.db.execute(head.as_string(self.db.conn) + found[4])

    def swap_side_table(self, store: str, dim: int) -> None:
        """Put the side table in the live one's place, under the live names."""
        t = _tables(store)
        live_indexes = {r["name"]: r["def"] for r in self.db.rows(INDEXES, (t.live,))}
        side_indexes = {r["name"] for r in self.db.rows(INDEXES, (t.next,))}
        names = {(r["contype"], which): r["conname"] for which in (t.live, t.next)
                 for r in self.db.rows(CONSTRAINTS, (which,))}
        self._ddl(DROP, table=t.live)
        self._ddl(RENAME_TABLE, old=t.next, new=t.live)
        self._ddl(DROP_HASH, table=t.live)
        for kind in ("p", "f"):
            old, new = names.get((kind, t.next)), names.get((kind, t.live))
            if old and new and old != new:
                self._ddl(RENAME_CONSTRAINT, table=t.live, old=old, new=new)
        for name, definition in live_indexes.items():
            if name + SUFFIX in side_indexes:
                self._ddl(RENAME_INDEX, old=name + SUFFIX, new=name)
            else:  # an index the side table lacks: built now (the text names the live table)
                self.db.execute(definition)
        if self.db.team:  # a team store: the new table gets the old one's policies
            self.db.execute(SECURE, (t.live,))

    def _ddl(self, template: str, **names: str) -> None:
        statement = sql.SQL(template).format(**{k: _ident(v) for k, v in names.items()})
        self.db.execute(statement.as_string(self.db.conn))
