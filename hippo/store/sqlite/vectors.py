"""SQLite: embedding vectors in sqlite-vec vec0 tables (cosine), one per store, and KNN.

Brain KNN (`knn`): the fast path is a vec0 KNN query with the filters vec0 can evaluate
during the scan (project, type, tier, a whole-second time range). A time range that
holds few memories (a date named in the query, usually) is searched along the
created_at index instead, one point lookup per memory in it. What vec0 cannot see
(superseded, the exact millisecond bounds) is checked against `memories` afterwards;
when that drops rows, the query is repeated with a larger k until the top `k` is
certain. Tag filters, or a vec0 that rejects the query, take the exact scan joined with
`memories` instead. Either way the result is the exact top `k` among the memories the
filters allow. Nothing here needs numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from hippo.store.clauses import chunk_where
from hippo.store.clauses import where as where_sql
from hippo.store.sqlite import vector_log
from hippo.store.vectors import TABLES, VecHit, Vectors
from hippo.timeutil import epoch

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.filters import EchoFilters, MemoryFilter
    from hippo.store.sqlite.database import Sql
    from hippo.store.sqlite.vector_log import VectorSync

# The columns vec0 filters on, beside each store's vectors (`TABLES`).
META_COLUMNS = {"brain": "project TEXT, type TEXT, tier TEXT, created INTEGER",
                "echo": "project TEXT, session_id INTEGER, started INTEGER"}
VEC_TABLE = ("CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
             "{key} INTEGER PRIMARY KEY, embedding float[{dimensions}] "
             "distance_metric=cosine, {meta_cols}{extra})")

VEC0_MAX_K = 4096  # sqlite-vec's limit on k in one KNN query
# vec0 results are ordered by distance, ties in vec0's own order: `_knn` orders them by id.
KNN = "SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ?{extra}"
EXACT = (
    "SELECT m.id AS id, vec_distance_cosine(v.embedding, ?) AS distance "
    "FROM memories m JOIN memories_vec v ON v.memory_id = m.id "
    "WHERE {where} ORDER BY distance, m.id LIMIT ?"
)
# Point lookups: vec0 answers `memory_id = x` from its rowid index, but `IN (...)` scans.
IDS = "SELECT column1 AS id FROM (VALUES {rows})"
# CROSS JOIN keeps the candidate list as the outer loop: rowid lookups, not a scan of
# the scope index over every active memory.
KEEP = "SELECT m.id FROM ({ids}) ids CROSS JOIN memories m ON m.id = ids.id WHERE {where}"
EMBEDDINGS = "SELECT ids.id, v.embedding FROM ({ids}) ids JOIN memories_vec v ON v.memory_id = ids.id"
SIMILARITIES = (
    "WITH c(id, e) AS MATERIALIZED ({embeddings}) "
    "SELECT a.id, b.id, 1.0 - vec_distance_cosine(a.e, b.e) FROM c a JOIN c b ON a.id < b.id"
)
# A time range (a date named in the query, --since/--until) holding few memories is
# searched along the created_at index with a point lookup per memory, instead of a vec0
# scan of every vector. Measured at 100k memories: a lookup costs about as much as 70
# vectors of the scan (53 µs vs 57-72 ms for 100k), so the range wins while it holds
# fewer than 1/RANGE_LOOKUP_COST of the store. The count stops there (LIMIT), and names
# the index: left to itself, the planner counts through `memories_scope`, every row.
RANGE_LOOKUP_COST = 70
IN_RANGE = ("SELECT count(*) FROM (SELECT 1 FROM memories INDEXED BY memories_created "
            "WHERE created_at >= ? AND created_at <= ? LIMIT ?)")
EXACT_IN_RANGE = (
    "SELECT m.id AS id, vec_distance_cosine(v.embedding, ?) AS distance "
    "FROM memories m INDEXED BY memories_created CROSS JOIN memories_vec v "
    "ON v.memory_id = m.id WHERE {where} ORDER BY distance, m.id LIMIT ?"
)
LATEST_ID = "SELECT max(id) FROM memories"
ECHO_KNN = ("SELECT chunk_id, distance FROM echo_vec WHERE embedding MATCH ? AND k = ? "
            "ORDER BY distance")
# Filtered: an exact scan of the matching rows (vec_distance_cosine), still brute force.
ECHO_EXACT = ("SELECT c.id, vec_distance_cosine(v.embedding, ?) AS d FROM echo_vec v "
              "JOIN echo_chunks c ON c.id = v.chunk_id "
              "JOIN echo_sessions e ON e.id = c.session_id "
              "WHERE {where} ORDER BY d LIMIT ?")

# -- a memory's vector, with the columns vec0 filters on ----------------------------------
VEC_DELETE = "DELETE FROM memories_vec WHERE memory_id = ?"
VEC_INSERT = (
    "INSERT INTO memories_vec(memory_id, embedding, project, type, tier, created) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
# vec0 KNN with metadata filters (global memories are stored with project '').
NEAREST = ("SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? "
           "AND type = ? AND project = ?")
# The vector log (schema step 0008), what a warm process's index syncs from: every vector
# write records its memory's id under the next sequence number, in the same transaction.
LOG_BUMP = ("INSERT INTO vector_log(memory_id, seq) SELECT ?, coalesce(max(seq), 0) + 1 "
            "FROM vector_log WHERE true ON CONFLICT(memory_id) DO UPDATE SET seq = excluded.seq")
ALLOWED_IDS = "SELECT m.id FROM memories m WHERE {where}"
# sqlite-vec's own cosine distance of each candidate (the same float32 arithmetic as its
# KNN scan), so an answer from memory orders exactly as the store's would.
DISTANCES = "SELECT column1, vec_distance_cosine(column2, ?) FROM (VALUES {rows})"
DISTANCE_BATCH = 4_000


def _blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vec_table_ddl(store: str, dimensions: int, table: str | None = None, extra: str = "") -> str:
    """CREATE statement of a store's vec0 table (`table` overrides the name, e.g. a side table)."""
    name, key, _ = TABLES[store]
    return VEC_TABLE.format(table=table or name, key=key, dimensions=dimensions,
                            meta_cols=META_COLUMNS[store], extra=extra)


def _nearest(hit: VecHit) -> tuple[float, int]:
    return hit.distance, hit.id


def _ids_sql(ids: Sequence[int]) -> str:
    return IDS.format(rows=",".join("(?)" for _ in ids))


def _vec0_constraints(filters: MemoryFilter) -> tuple[str, list[Any]]:
    """The filters vec0 evaluates during the scan: a superset of what `filters` allows."""
    parts: list[str] = []
    params: list[Any] = []

    def among(column: str, values: Sequence[Any]) -> None:
        parts.append(f" AND {column} IN ({','.join('?' * len(values))})")
        params.extend(values)

    if filters.projects is not None:
        # vec0 stores global as '' (metadata columns hold no NULL).
        among("project", list(dict.fromkeys(p or "" for p in filters.projects)) or [""])
    if filters.types:
        among("type", list(filters.types))
    if filters.tiers:
        among("tier", list(filters.tiers))
    # `created` is whole epoch seconds (floor), so these bounds can only let more through.
    if filters.since:
        parts.append(" AND created >= ?")
        params.append(epoch(filters.since))
    if filters.until:
        parts.append(" AND created <= ?")
        params.append(epoch(filters.until))
    return "".join(parts), params


class SqliteVectors(Vectors):
    db: Sql

    def _create(self, store: str, dimensions: int) -> None:
        self.db.execute(vec_table_ddl(store, dimensions))

    # -- Brain KNN -------------------------------------------------------------------
    def knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
        if k <= 0 or not self.has("brain"):
            return []
        if self._narrow(filters):
            return self._exact(query, k, filters, EXACT_IN_RANGE)
        if not filters.tags:
            hits = self._knn(query, k, filters)
            if hits is not None:
                return hits
        return self._exact(query, k, filters)

    def _keep(self, ids: list[int], filters: MemoryFilter) -> set[int]:
        where, params = where_sql(self.db.dialect, filters)
        sql = KEEP.format(ids=_ids_sql(ids), where=where)
        return {r[0] for r in self.db.execute(sql, [*ids, *params])}

    def _knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit] | None:
        """vec0 KNN with the post-check; None when vec0 cannot answer (use the exact scan)."""
        extra, params = _vec0_constraints(filters)
        # A larger k costs vec0 almost nothing (same scan, bigger heap), so start with room
        # for the rows the check may drop.
        fetch = 2 * k
        while True:
            fetch = min(fetch, VEC0_MAX_K)
            try:
                rows = self.db.rows(KNN.format(extra=extra), [query, fetch, *params])
            except apsw.SQLError:
                return None
            if not rows:
                return []
            allowed = self._keep([r["memory_id"] for r in rows], filters)
            hits = sorted((VecHit(r["memory_id"], r["distance"]) for r in rows
                           if r["memory_id"] in allowed), key=_nearest)
            # Every row vec0 could give was seen, or enough survived the check and no row
            # vec0 left out can tie the k-th (vec0 orders ties its own way; ties go by id
            # here, as in the exact scan and the warm index): exact.
            if len(rows) < fetch or (len(hits) >= k
                                     and hits[k - 1].distance < rows[-1]["distance"]):
                return hits[:k]
            if fetch >= VEC0_MAX_K:
                return None
            fetch *= 4

    def _exact(self, query: bytes, k: int, filters: MemoryFilter,
               sql: str = EXACT) -> list[VecHit]:
        where, params = where_sql(self.db.dialect, filters)
        rows = self.db.rows(sql.format(where=where), [query, *params, k])
        return [VecHit(r["id"], r["distance"]) for r in rows]

    def _narrow(self, filters: MemoryFilter) -> bool:
        """True when the filters' time range holds few enough memories for point lookups."""
        if not filters.since and not filters.until:
            return False
        most = int(self.db.scalar(LATEST_ID) or 0) // RANGE_LOOKUP_COST
        if most < 1:
            return False
        found = self.db.scalar(IN_RANGE, (filters.since or "", filters.until or "\uffff", most))
        return int(found or 0) < most

    def embeddings(self, ids: Sequence[int]) -> dict[int, bytes]:
        if not ids or not self.has("brain"):
            return {}
        sql = EMBEDDINGS.format(ids=_ids_sql(ids))
        return {r[0]: r[1] for r in self.db.execute(sql, list(ids))}

    def similarities(self, ids: Sequence[int]) -> dict[tuple[int, int], float]:
        if len(ids) < 2 or not self.has("brain"):
            return {}
        sql = SIMILARITIES.format(embeddings=EMBEDDINGS.format(ids=_ids_sql(ids)))
        return {(r[0], r[1]): r[2] for r in self.db.execute(sql, list(ids))}

    # -- Echo KNN --------------------------------------------------------------------
    def knn_chunks(self, query: bytes, k: int, filters: EchoFilters) -> list[VecHit]:
        if not filters.narrowed():
            rows = self.db.execute(ECHO_KNN, (query, k))
        else:
            where, params = chunk_where(self.db.dialect, filters)
            rows = self.db.execute(ECHO_EXACT.format(where=where), (query, *params, k))
        return [VecHit(int(a), float(b)) for a, b in rows]

    # -- a memory's vector -------------------------------------------------------------
    def put(self, memory_id: int, vector: np.ndarray, *, project: str, type: str, tier: str,
            created: int) -> None:
        self.db.execute(VEC_DELETE, (memory_id,))
        self.db.execute(VEC_INSERT, (memory_id, _blob(vector), project, type, tier, created))
        self._log(memory_id)

    def drop(self, memory_id: int) -> None:
        self.db.execute(VEC_DELETE, (memory_id,))
        self._log(memory_id)

    def _log(self, memory_id: int) -> None:
        try:
            self.db.execute(LOG_BUMP, (memory_id,))
        except apsw.SQLError as exc:  # a file opened without its schema steps (tests)
            if "no such table: vector_log" not in str(exc):
                raise

    def nearest(self, query: bytes, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        return [(int(a), float(b)) for a, b in self.db.execute(NEAREST, (query, k, type, project))]

    # -- what a warm process's in-memory index reads (`hippo.warm.index`) --------------
    def sync(self, known: tuple[Any, ...] | None, seq: int,
             load: Callable[[tuple[Any, ...], dict[str, int], Iterable[tuple[Any, ...]]], None]
             ) -> VectorSync:
        """`hippo.store.sqlite.vector_log.sync` over this store's connection."""
        return vector_log.sync(self.db, known, seq, load)

    def allowed(self, filters: MemoryFilter) -> list[int]:
        """Every memory a Brain search with `filters` may return (active, in scope)."""
        where_, params = where_sql(self.db.dialect, filters)
        return [r[0] for r in self.db.execute(ALLOWED_IDS.format(where=where_), params)]

    def distances(self, query: bytes, vectors: Sequence[tuple[int, bytes]]
                  ) -> dict[int, float]:
        """sqlite-vec's cosine distance from `query` to each (id, float32 blob)."""
        out: dict[int, float] = {}
        for at in range(0, len(vectors), DISTANCE_BATCH):
            part = vectors[at:at + DISTANCE_BATCH]
            sql = DISTANCES.format(rows=",".join("(?, ?)" for _ in part))
            params: list[Any] = [query]
            for key, blob in part:
                params += (key, blob)
            out.update((int(a), float(b)) for a, b in self.db.execute(sql, params))
        return out
