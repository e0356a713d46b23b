"""PostgreSQL: the checks `hippo doctor` runs on the store, and their repairs.

SQLite's file checks have their server meaning here: `integrity` is that every table of
hippo's schema is there (the server checks its own pages: data checksums, amcheck);
foreign keys are enforced by the server, never merely declared; a full-text index is a
generated `tsvector` column (always its row's text) with a GIN index, checked as valid
and rebuilt by REINDEX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.store.health import IndexCheck
from hippo.store.postgres.schema import USER
from hippo.store.postgres.vector import Vec

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

# The tables every hippo schema has (`hippo.store.postgres.schema`, p0001_core).
TABLES = ("meta", "memories", "memory_sources", "audit", "echo_sessions", "echo_chunks",
          "watermarks", "embed_cache", "counters", "runs", "locks", "guard", "keep_apart",
          "project_dirs", "project_moves", "_migrations")
MISSING_TABLES = ("SELECT t FROM unnest(?::text[]) AS t WHERE to_regclass(t) IS NULL "
                  "ORDER BY t LIMIT ?")
# SQLite's FTS5 tables and, here, the GIN index over each table's generated tsvector.
FTS_INDEX = {"memories_fts": "memories_tsv", "echo_fts": "echo_chunks_tsv"}
INDEX_VALID = ("SELECT i.indisvalid AND i.indisready FROM pg_index i "
               "WHERE i.indexrelid = to_regclass(?)")
REINDEX = {"memories_tsv": "REINDEX INDEX memories_tsv",
           "echo_chunks_tsv": "REINDEX INDEX echo_chunks_tsv"}
VEC_TABLE = {"brain": "memories_vec", "echo": "echo_vec"}
VEC_TYPE = ("SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = to_regclass(?) AND a.attname = 'embedding' "
            "AND NOT a.attisdropped")
UNEMBEDDED = {
    "brain": ("SELECT id FROM memories WHERE status = 'active' AND id NOT IN "
              "(SELECT memory_id FROM memories_vec) ORDER BY id"),
    "echo": ("SELECT id FROM echo_chunks WHERE id NOT IN (SELECT chunk_id FROM echo_vec) "
             "ORDER BY id"),
}
ORPHANS = {
    "brain": ("SELECT memory_id FROM memories_vec WHERE memory_id NOT IN "
              "(SELECT id FROM memories WHERE status = 'active') ORDER BY memory_id"),
    "echo": ("SELECT chunk_id FROM echo_vec WHERE chunk_id NOT IN (SELECT id FROM echo_chunks) "
             "ORDER BY chunk_id"),
}
CHUNKS_BY_ID = ("SELECT id, text, project, session_id, started_at FROM echo_chunks "
                "WHERE id = ANY(?) ORDER BY id")
CHUNK_VEC_DROP = "DELETE FROM echo_vec WHERE chunk_id = ?"
# The vector table has no filter columns here: filters join echo_chunks.
CHUNK_VEC_PUT = ("INSERT INTO echo_vec(chunk_id, embedding) VALUES (?, ?) "
                 "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding")
SCORED = {"brain": "SELECT text, content_hash FROM memories WHERE status = 'active'",
          "echo": "SELECT text, content_hash FROM echo_chunks"}
UNCACHED = {store: ("SELECT text FROM (" + scored + ") AS t WHERE NOT EXISTS (SELECT 1 FROM "
                    "embed_cache e WHERE e.model = ? AND e.content_hash = t.content_hash)")
            for store, scored in SCORED.items()}
# SQLite's LIKE is case-blind for ASCII: ILIKE here. Keys in byte order, as SQLite's.
MATRIX_COUNT = "SELECT count(*) FROM embed_cache WHERE model ILIKE ?"
MATRIX_PAGE = ('SELECT model, content_hash, vector FROM embed_cache WHERE model ILIKE ? '
               'AND (model COLLATE "C", content_hash COLLATE "C") > (?, ?) '
               'ORDER BY model COLLATE "C", content_hash COLLATE "C" LIMIT ?')
MATRIX_SET = "UPDATE embed_cache SET vector = ? WHERE model = ? AND content_hash = ?"
DANGLING = ("SELECT count(*) FROM memory_sources WHERE chunk_id NOT IN "
            "(SELECT id FROM echo_chunks)")
DANGLING_DROP = "DELETE FROM memory_sources WHERE chunk_id NOT IN (SELECT id FROM echo_chunks)"
# A link whose chunk belongs to a session the memory's `source` does not name (SQLite's
# json_each over `$.session`: an array's items, an object's values, or the one value).
FOREIGN_LINKS = (
    "WITH src AS (SELECT id, source::jsonb -> 'session' AS s FROM memories "
    "WHERE source IS NOT NULL), "
    "named AS (SELECT id, CASE jsonb_typeof(s) WHEN 'array' THEN s "
    "WHEN 'object' THEN jsonb_path_query_array(s, '$.*') ELSE jsonb_build_array(s) END AS v "
    "FROM src WHERE s IS NOT NULL) "
    "SELECT s.memory_id, s.chunk_id, e.session_key FROM memory_sources s "
    "JOIN echo_chunks c ON c.id = s.chunk_id JOIN echo_sessions e ON e.id = c.session_id "
    "JOIN named n ON n.id = s.memory_id "
    "WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(n.v) j(value) "
    "WHERE jsonb_typeof(j.value) = 'string' AND j.value #>> '{}' = e.session_key) "
    "ORDER BY s.memory_id, s.chunk_id"
)
REFERENCES = ("SELECT id, superseded_by, consolidated_into FROM memories "
              "WHERE superseded_by IS NOT NULL OR consolidated_into IS NOT NULL ORDER BY id")
# A watermark is its user's (their files, on their machine): doctor checks only those.
WATERMARKS = f'SELECT path, "offset" FROM watermarks WHERE owner = {USER} ORDER BY path COLLATE "C"'
WATERMARK_DROP = f"DELETE FROM watermarks WHERE path = ? AND owner = {USER}"


def _gin(index: str) -> str:
    if index not in FTS_INDEX:
        raise ValueError(f"unknown full-text index {index!r}")
    return FTS_INDEX[index]


class PgHealth:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def integrity(self, limit: int) -> list[str]:
        missing = [r["t"] for r in self.db.rows(MISSING_TABLES, (list(TABLES), int(limit)))]
        return [f"table {t} is missing" for t in missing] or ["ok"]

    def pending_migrations(self) -> list[str]:
        from hippo.store.postgres.migrations import pending

        return pending(self.db)

    def foreign_key_violations(self) -> int:
        return 0  # the server enforces every declared foreign key on each write

    def check_fulltext(self, index: str) -> IndexCheck:
        gin = _gin(index)
        valid = self.db.scalar(INDEX_VALID, (gin,))
        if valid is None:
            return IndexCheck(error=f"index {gin} is missing")
        return IndexCheck() if valid else IndexCheck(error=f"index {gin} is not valid")

    def rebuild_fulltext(self, index: str) -> None:
        self.db.execute(REINDEX[_gin(index)])

    def has_vectors(self, store: str) -> bool:
        return self.db.has_table(VEC_TABLE[store])

    def vectors_declare(self, store: str, dimensions: int) -> bool:
        declared = self.db.scalar(VEC_TYPE, (VEC_TABLE[store],))
        return declared == f"vector({int(dimensions)})"

    def unembedded(self, store: str) -> list[int]:
        return [int(r["id"]) for r in self.db.rows(UNEMBEDDED[store])]

    def orphan_vectors(self, store: str) -> list[int]:
        key = "memory_id" if store == "brain" else "chunk_id"
        return [int(r[key]) for r in self.db.rows(ORPHANS[store])]

    def chunks_to_embed(self, ids: Sequence[int]) -> list[Row]:
        return self.db.rows(CHUNKS_BY_ID, ([int(i) for i in ids],))

    def drop_chunk_vector(self, chunk_id: int) -> None:
        self.db.execute(CHUNK_VEC_DROP, (chunk_id,))

    def put_chunk_vector(self, chunk_id: int, blob: bytes, project: str, session_id: int,
                         started: int | None) -> None:
        self.db.execute(CHUNK_VEC_PUT, (chunk_id, Vec(blob)))

    def texts_without_token_matrix(self, store: str, model: str) -> list[str]:
        return [r["text"] for r in self.db.rows(UNCACHED[store], (model,))]

    def token_matrix_count(self, suffix: str) -> int:
        return int(self.db.scalar(MATRIX_COUNT, ("%" + suffix,)))

    def token_matrices_after(self, suffix: str, after: tuple[str, str],
                             limit: int) -> list[Row]:
        rows = self.db.rows(MATRIX_PAGE, ("%" + suffix, *after, int(limit)))
        return [{**r, "vector": bytes(r["vector"])} for r in rows]

    def replace_token_matrix(self, model: str, content_hash: str, blob: bytes) -> None:
        self.db.execute(MATRIX_SET, (blob, model, content_hash))

    def dangling_provenance(self) -> int:
        return int(self.db.scalar(DANGLING))

    def drop_dangling_provenance(self) -> None:
        self.db.execute(DANGLING_DROP)

    def foreign_provenance(self) -> list[Row]:
        return self.db.rows(FOREIGN_LINKS)

    def references(self) -> list[Row]:
        return self.db.rows(REFERENCES)

    def watermarks(self) -> list[tuple[str, int]]:
        return [(r["path"], int(r["offset"])) for r in self.db.rows(WATERMARKS)]

    def drop_watermark(self, path: str) -> None:
        self.db.execute(WATERMARK_DROP, (path,))
