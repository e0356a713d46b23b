"""PostgreSQL: embedding vectors in pgvector tables (cosine), one per store, and KNN.

`memories_vec(memory_id, embedding)` and `echo_vec(chunk_id, embedding)`, each with an
HNSW index (`vector_cosine_ops`), created with a store's first vectors (`create`); a row
goes with its memory or chunk (ON DELETE CASCADE).

KNN is SQLite's: the filters are inside the query, nearest first, ties by id. A store of
up to `EXACT_ROWS` vectors is always searched exactly (`ORDER BY distance, id`: two sort
keys, so no index can answer it), which is SQLite's answer to the last bit of a float.
A bigger one asks the HNSW index first, with `hnsw.ef_search` raised to give room for
the filters (pgvector 0.6 returns at most ef_search rows and filters them after the
index scan); when that leaves fewer than `k` rows (a filter that keeps few memories: a
tag, a date range), the exact scan answers instead. A filter on a time range or a tag is
exact from the start: the planner then walks the rows the filter keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.clauses import chunk_where
from hippo.store.clauses import where as where_sql
from hippo.store.postgres.vector import Vec
from hippo.store.vectors import TABLES, VecHit, Vectors

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.filters import EchoFilters, MemoryFilter
    from hippo.store.postgres.database import PgSql

VEC_TABLE = ("CREATE TABLE IF NOT EXISTS {table} ("
             "{key} BIGINT PRIMARY KEY REFERENCES {parent}(id) ON DELETE CASCADE, "
             "embedding vector({dimensions}) NOT NULL)")
VEC_INDEX = ("CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} "
             "USING hnsw (embedding vector_cosine_ops)")
# On a team store (`hippo.store.postgres.team_sql`): created as the schema owner, secured.
TEAM_CREATE = "SELECT hippo_team_vectors(?, ?)"
HNSW_MAX_DIM = 2000  # pgvector indexes vectors of at most this many dimensions

# Up to this many vectors a store is scanned exactly (a few ms at 384-d); the index beyond.
EXACT_ROWS = 20_000
# The planner's row estimate, else a count that stops just past EXACT_ROWS.
ESTIMATE = "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(?)"
COUNT_UPTO = "SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT ?) t"
# ef_search: pgvector's default is 40; at most 1000. At 100k clustered 384-d vectors,
# 200 gave recall@10 0.991 on one build and 0.972 on another; 400 gave 0.997 for about
# 1.3x the latency (bench/bench_postgres.py, docs/postgres.md).
EF_MIN, EF_MAX, EF_PER_K = 400, 1000, 4
SET_EF = "SELECT set_config('hnsw.ef_search', ?, false)"

# Two sort keys (distance, id): exact, and no HNSW index can serve it.
EXACT = (
    "SELECT m.id AS id, v.embedding <=> ? AS distance "
    "FROM memories m JOIN memories_vec v ON v.memory_id = m.id "
    "WHERE {where} ORDER BY distance, m.id LIMIT ?"
)
# One sort key, the operator itself: the HNSW index answers, the filters applied after.
INDEXED = (
    "SELECT m.id AS id, v.embedding <=> ? AS distance "
    "FROM memories_vec v JOIN memories m ON m.id = v.memory_id "
    "WHERE {where} ORDER BY v.embedding <=> ? LIMIT ?"
)
# How many vectors the filters allow, counted up to a limit (is what the index gave all?).
ALLOWED = ("SELECT count(*) FROM (SELECT 1 FROM memories m JOIN memories_vec v "
           "ON v.memory_id = m.id WHERE {where} LIMIT ?) t")
ECHO_ALLOWED = ("SELECT count(*) FROM (SELECT 1 FROM echo_vec v "
                "JOIN echo_chunks c ON c.id = v.chunk_id "
                "JOIN echo_sessions e ON e.id = c.session_id WHERE {where} LIMIT ?) t")
EMBEDDINGS = "SELECT memory_id, embedding FROM memories_vec WHERE memory_id = ANY(?)"
SIMILARITIES = (
    "WITH c AS MATERIALIZED (SELECT memory_id AS id, embedding AS e FROM memories_vec "
    "WHERE memory_id = ANY(?)) "
    "SELECT a.id, b.id, 1.0 - (a.e <=> b.e) FROM c a JOIN c b ON a.id < b.id"
)
ECHO_EXACT = (
    "SELECT c.id AS id, v.embedding <=> ? AS distance FROM echo_vec v "
    "JOIN echo_chunks c ON c.id = v.chunk_id "
    "JOIN echo_sessions e ON e.id = c.session_id "
    "WHERE {where} ORDER BY distance, c.id LIMIT ?"
)
ECHO_INDEXED = (
    "SELECT c.id AS id, v.embedding <=> ? AS distance FROM echo_vec v "
    "JOIN echo_chunks c ON c.id = v.chunk_id "
    "JOIN echo_sessions e ON e.id = c.session_id "
    "WHERE {where} ORDER BY v.embedding <=> ? LIMIT ?"
)
# -- a memory's vector (project, type, tier: read from `memories` itself) ----------------
VEC_DELETE = "DELETE FROM memories_vec WHERE memory_id = ?"
VEC_PUT = ("INSERT INTO memories_vec(memory_id, embedding) VALUES (?, ?) "
           "ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding")
# Cosine distance, as sqlite-vec's; global memories are project '' here too.
NEAREST = ("SELECT v.memory_id, v.embedding <=> :q AS distance FROM memories_vec v "
           "JOIN memories m ON m.id = v.memory_id "
           "WHERE m.type = :type AND coalesce(m.project, '') = :project "
           "ORDER BY v.embedding <=> :q, v.memory_id LIMIT :k")


def _vec(vector: np.ndarray) -> Vec:
    import numpy as np

    return Vec(np.asarray(vector, dtype="<f4").tobytes())


def vec_table_ddl(store: str, dimensions: int, table: str | None = None) -> list[str]:
    """The statements creating a store's vector table (`table` overrides the name) and its
    HNSW index (none for more dimensions than pgvector indexes)."""
    name, key, parent = TABLES[store]
    table = table or name
    ddl = [VEC_TABLE.format(table=table, key=key, parent=parent, dimensions=int(dimensions))]
    if dimensions <= HNSW_MAX_DIM:
        ddl.append(VEC_INDEX.format(table=table))
    return ddl


def _sorted(rows: list[Any], k: int) -> list[VecHit]:
    hits = sorted((VecHit(int(r["id"]), float(r["distance"])) for r in rows),
                  key=lambda h: (h.distance, h.id))
    return hits[:k]


class PgVectors(Vectors):
    db: PgSql

    def __init__(self, db: PgSql) -> None:
        super().__init__(db)
        self._ef = 0

    def _create(self, store: str, dimensions: int) -> None:
        if self.db.team:  # a member may not create tables: the owner's function does
            self.db.execute(TEAM_CREATE, (store, int(dimensions)))
        else:
            for sql in vec_table_ddl(store, dimensions):
                self.db.execute(sql)

    # -- which plan ------------------------------------------------------------------
    def _big(self, store: str) -> bool:
        """True when `store` holds more than EXACT_ROWS vectors (and has its index)."""
        table = TABLES[store][0]
        estimate = int(self.db.scalar(ESTIMATE, (table,)) or -1)
        if 0 <= estimate < EXACT_ROWS // 2:
            return False
        if estimate < 2 * EXACT_ROWS:  # never analysed, or near the line: count
            found = self.db.scalar(COUNT_UPTO.format(table=table), (EXACT_ROWS + 1,))
            if int(found or 0) <= EXACT_ROWS:
                return False
        return self.db.has_table(f"{table}_hnsw")

    def _ef_search(self, k: int) -> int | None:
        """Raise ef_search for a top `k`; None when the index cannot give `k` rows."""
        ef = max(EF_MIN, EF_PER_K * k)
        if k > EF_MAX:
            return None
        ef = min(ef, EF_MAX)
        if ef != self._ef:
            self.db.execute(SET_EF, (str(ef),))
            self._ef = ef
        return ef

    # -- Brain KNN -------------------------------------------------------------------
    def knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
        if k <= 0 or not self.has("brain"):
            return []
        narrow = bool(filters.tags or filters.since or filters.until)
        if not narrow and self._big("brain"):
            hits = self._knn(query, k, filters)
            if hits is not None:
                return hits
        return self._exact(query, k, filters)

    def _knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit] | None:
        """The HNSW index's top `k` with the filters; None when it found fewer than `k`
        and the filters allow more (use the exact scan)."""
        if self._ef_search(k) is None:
            return None
        where, params = where_sql(self.db.dialect, filters)
        q = Vec(query)
        rows = self.db.rows(INDEXED.format(where=where), [q, *params, q, k + 1])
        if len(rows) < k and int(self.db.scalar(
                ALLOWED.format(where=where), [*params, len(rows) + 1]) or 0) > len(rows):
            return None
        return _sorted(rows, k)

    def _exact(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
        where, params = where_sql(self.db.dialect, filters)
        rows = self.db.rows(EXACT.format(where=where), [Vec(query), *params, k])
        return [VecHit(int(r["id"]), float(r["distance"])) for r in rows]

    def embeddings(self, ids: Sequence[int]) -> dict[int, bytes]:
        if not ids or not self.has("brain"):
            return {}
        return {int(a): bytes(b) for a, b in self.db.execute(EMBEDDINGS, (list(ids),))}

    def similarities(self, ids: Sequence[int]) -> dict[tuple[int, int], float]:
        if len(ids) < 2 or not self.has("brain"):
            return {}
        return {(int(a), int(b)): float(s)
                for a, b, s in self.db.execute(SIMILARITIES, (list(ids),))}

    # -- Echo KNN --------------------------------------------------------------------
    def knn_chunks(self, query: bytes, k: int, filters: EchoFilters) -> list[VecHit]:
        if k <= 0 or not self.has("echo"):
            return []
        where, params = chunk_where(self.db.dialect, filters)
        q = Vec(query)
        if self._big("echo") and self._ef_search(k) is not None:
            rows = self.db.rows(ECHO_INDEXED.format(where=where), [q, *params, q, k + 1])
            if len(rows) >= k or int(self.db.scalar(
                    ECHO_ALLOWED.format(where=where), [*params, len(rows) + 1]) or 0) <= len(rows):
                return _sorted(rows, k)
        rows = self.db.rows(ECHO_EXACT.format(where=where), [q, *params, k])
        return [VecHit(int(r["id"]), float(r["distance"])) for r in rows]

    # -- a memory's vector -------------------------------------------------------------
    def put(self, memory_id: int, vector: np.ndarray, *, project: str, type: str, tier: str,
            created: int) -> None:
        self.db.execute(VEC_PUT, (memory_id, _vec(vector)))

    def drop(self, memory_id: int) -> None:
        if self.has("brain"):
            self.db.execute(VEC_DELETE, (memory_id,))

    def nearest(self, query: bytes, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        params = {"q": Vec(query), "k": k, "type": type, "project": project}
        return [(int(r["memory_id"]), float(r["distance"]))
                for r in self.db.rows(NEAREST, params)]
