"""PostgreSQL: what maintenance does to pgvector its own way
(`hippo.store.reindex.Reindex`).

The vector tables hold no metadata: a memory's type and project come from `memories`
(joined), and a project's move leaves the vectors as they are.

A reindex's side table (`<table>_next`: key, vector, content hash) gets the live table's
indexes (its HNSW index: built as the batches are written, while searches keep using the
live table). The swap, in the reindex's last transaction, drops the live table and
renames the side table (its indexes and constraints too) into its place: a few catalog
changes, no copy and no index build while searches wait. Each vector's metadata is `()`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql

from hippo.store.postgres.vector import Vec
from hippo.store.reindex import SIDE, Reindex
from hippo.store.vectors import TABLES

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

# Streamed a page at a time along the key (no cursor left open between pages).
SCAN = (
    "SELECT v.memory_id, m.type, coalesce(m.project, ''), v.embedding FROM memories_vec v "
    "JOIN memories m ON m.id = v.memory_id WHERE v.memory_id > ? ORDER BY v.memory_id LIMIT ?"
)
SCAN_PAGE = 2000
VEC_TYPE = ("SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = to_regclass(?) AND a.attname = 'embedding' "
            "AND NOT a.attisdropped")
READ_LIVE = "SELECT {key} FROM {live}"
READ_LIVE_KEYS = "SELECT {key} FROM {live} WHERE {key} = ANY(?)"
READ_SIDE = "SELECT {key}, content_hash FROM {next}"
UPSERT_SIDE = ("INSERT INTO {next}({key}, embedding, content_hash) VALUES (?, ?, ?) "
               "ON CONFLICT ({key}) DO UPDATE SET embedding = excluded.embedding, "
               "content_hash = excluded.content_hash")
SECURE = "SELECT hippo_team_secure(?)"
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


def _names(store: str) -> dict[str, str]:
    live, key, content = TABLES[store]
    return {"live": live, "key": key, "content": content, "next": SIDE.format(live)}


def _ident(name: str) -> sql.Identifier:
    return sql.Identifier(name)


class PgReindex(Reindex):
    db: PgSql


    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        last = 0
        while True:
            page = self.db.execute(SCAN, (last, SCAN_PAGE)).fetchall()
            for mid, mtype, project, blob in page:
                yield int(mid), mtype, project, bytes(blob)
            if len(page) < SCAN_PAGE:
                return
            last = int(page[-1][0])


    def move_chunk_vectors(self, src: str, dst: str) -> None:
        pass  # the vectors carry no project

    def set_chunk_vector_project(self, chunk_id: int, project: str) -> None:
        pass

    def declares(self, store: str, dimensions: int) -> bool:
        declared = self.db.scalar(VEC_TYPE, (TABLES[store][0],))
        return declared == f"vector({int(dimensions)})"

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        n = _names(store)
        rows = (self.db.execute(READ_LIVE.format(**n)) if keys is None else
                self.db.execute(READ_LIVE_KEYS.format(**n), ([int(k) for k in keys],)))
        return {int(r[0]): () for r in rows}

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        return {int(r[0]): (r[1], ())
                for r in self.db.execute(READ_SIDE.format(**_names(store)))}

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        self.db.execute(UPSERT_SIDE.format(**_names(store)), (key, Vec(vector), content_hash))

    def create_side_table(self, store: str, dim: int, *, drop_old: bool) -> None:
        n = _names(store)
        if drop_old:
            self.db.execute(DROP_IF_EXISTS.format(table=n["next"]))
        if self.db.has_table(n["next"]):
            return
        self.db.execute(SIDE_TABLE.format(dim=int(dim), **n))
        for index in self.db.rows(INDEXES, (n["live"],)):
            found = INDEX_DEF.match(index["def"])
            if found:  # the live table's index, on the side table, named <name>_next
                head = sql.SQL(COPY_INDEX).format(
                    unique=sql.SQL(found[1] or ""), name=_ident(SIDE.format(index["name"])),
                    table=_ident(n["next"]))
                self.db.execute(head.as_string(self.db.conn) + found[4])

    def swap_side_table(self, store: str, dim: int) -> None:
        """Put the side table in the live one's place, under the live names."""
        n = _names(store)
        live, side = n["live"], n["next"]
        live_indexes = {r["name"]: r["def"] for r in self.db.rows(INDEXES, (live,))}
        side_indexes = {r["name"] for r in self.db.rows(INDEXES, (side,))}
        names = {(r["contype"], which): r["conname"] for which in (live, side)
                 for r in self.db.rows(CONSTRAINTS, (which,))}
        self._ddl(DROP, table=live)
        self._ddl(RENAME_TABLE, old=side, new=live)
        self._ddl(DROP_HASH, table=live)
        for kind in ("p", "f"):
            old, new = names.get((kind, side)), names.get((kind, live))
            if old and new and old != new:
                self._ddl(RENAME_CONSTRAINT, table=live, old=old, new=new)
        for name, definition in live_indexes.items():
            if SIDE.format(name) in side_indexes:
                self._ddl(RENAME_INDEX, old=SIDE.format(name), new=name)
            else:  # an index the side table lacks: built now (the text names the live table)
                self.db.execute(definition)
        if self.db.team:  # a team store: the new table gets the old one's policies
            self.db.execute(SECURE, (live,))

    def _ddl(self, template: str, **names: str) -> None:
        statement = sql.SQL(template).format(**{k: _ident(v) for k, v in names.items()})
        self.db.execute(statement.as_string(self.db.conn))
