"""SQLite: brain memories: insert, read, update, status, provenance links."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from hippo.records import FIELDS
from hippo.store.sqlite import vector_log
from hippo.store.sqlite.filters import CURRENT
from hippo.store.sqlite.vector_log import VectorSync

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.base import Row
    from hippo.store.filters import SearchFilters
    from hippo.store.memories import MemoryFilter
    from hippo.store.sqlite.database import Sql

COLUMNS = ", ".join(FIELDS)  # the record's fields, in its order
GET = f"SELECT {COLUMNS} FROM memories WHERE id = ?"
GET_MANY = f"SELECT {COLUMNS} FROM memories WHERE id IN ({{marks}})"
ACTIVE_IN_SCOPE = ("SELECT count(*) FROM memories WHERE status = 'active' AND "
                   "(project IS NULL OR project IS ?)")
EXISTS = "SELECT 1 FROM memories WHERE id = ?"
FIND_SAME = (
    f"SELECT {COLUMNS} FROM memories WHERE dedup_key = ? AND status IN ('active', 'done') "
    "ORDER BY id LIMIT 1"
)
INSERT = (
    "INSERT INTO memories(id, text, type, tier, project, tags, importance, author, status, "
    "pinned, canonical, confidence, created_at, updated_at, confirmed_at, verified_at, "
    "consolidated_into, superseded_by, source, dedup_key, content_hash, valid_from, valid_to) "
    "VALUES (:id, :text, :type, :tier, :project, :tags, :importance, :author, :status, "
    ":pinned, :canonical, :confidence, :created_at, :updated_at, :confirmed_at, :verified_at, "
    ":consolidated_into, :superseded_by, :source, :dedup_key, :content_hash, :valid_from, "
    ":valid_to)"
)
REINFORCE = (
    "UPDATE memories SET confirmed_at = ?, updated_at = ?, confidence = ?, importance = ?, "
    "tags = ?, source = ? WHERE id = ?"
)
# The columns `update` may set (its SET clause is built from these names only).
UPDATABLE = frozenset({
    "text", "type", "tier", "project", "tags", "importance", "status", "pinned", "canonical",
    "confidence", "confirmed_at", "verified_at", "consolidated_into", "superseded_by",
    "source", "author", "dedup_key", "content_hash", "updated_at", "valid_from", "valid_to"})
UPDATE = "UPDATE memories SET {sets} WHERE id = :id"
RESTORE = (
    "UPDATE memories SET text = :text, type = :type, tier = :tier, project = :project, "
    "tags = :tags, importance = :importance, author = :author, status = :status, "
    "pinned = :pinned, canonical = :canonical, confidence = :confidence, "
    "created_at = :created_at, updated_at = :updated_at, confirmed_at = :confirmed_at, "
    "verified_at = :verified_at, consolidated_into = :consolidated_into, "
    "superseded_by = :superseded_by, source = :source, "
    "dedup_key = :dedup_key, content_hash = :content_hash, valid_from = :valid_from, "
    "valid_to = :valid_to WHERE id = :id"
)
DELETE_ROW = "DELETE FROM memories WHERE id = ?"
SECURE_DELETE = "PRAGMA secure_delete = ON"
ERASE = (
    "UPDATE memories SET text = '', tags = '[]', source = NULL, status = 'deleted', "
    "dedup_key = ?, content_hash = '', updated_at = ? WHERE id = ?"
)
UNLINK_ALL = "DELETE FROM memory_sources WHERE memory_id = ?"
FTS_OPTIMIZE = "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')"
DEFER_FOREIGN_KEYS = "PRAGMA defer_foreign_keys = ON"
ACTIVE_ELSEWHERE = ("SELECT count(*) FROM memories WHERE status = 'active' AND project "
                    "IS NOT NULL AND project IS NOT ?")
LISTING = f"SELECT {COLUMNS} FROM memories m WHERE {{where}} ORDER BY id DESC"
EXPORT = f"SELECT {COLUMNS} FROM memories ORDER BY id"
HELD = "SELECT id, dedup_key FROM memories WHERE id IN (SELECT value FROM json_each(?))"
REFERENCES = ("SELECT id, superseded_by, consolidated_into FROM memories "
              "WHERE superseded_by IS NOT NULL OR consolidated_into IS NOT NULL")
CITING_SESSION = ("SELECT id FROM memories WHERE source IS NOT NULL AND json_valid(source) "
                  "AND EXISTS (SELECT 1 FROM json_each(source, '$.session') WHERE value = ?) "
                  "ORDER BY id")
# Tasks a compaction summary listed as pending.
PENDING_TASKS = ("SELECT id, source FROM memories WHERE status = 'active' AND type = 'task' "
                 "AND author = 'machine' AND project IS ? AND EXISTS "
                 "(SELECT 1 FROM json_each(memories.tags) t WHERE t.value = ?)")
# Cache rows of these hashes (a JSON list, three times) that no stored text still has.
DROP_CACHED = (
    "DELETE FROM embed_cache WHERE content_hash IN (SELECT value FROM json_each(?)) "
    "AND content_hash NOT IN (SELECT content_hash FROM memories WHERE content_hash IN "
    "(SELECT value FROM json_each(?))) AND content_hash NOT IN (SELECT content_hash FROM "
    "echo_chunks WHERE content_hash IN (SELECT value FROM json_each(?)))"
)
# -- vectors ---------------------------------------------------------------------------
VEC_DELETE = "DELETE FROM memories_vec WHERE memory_id = ?"
VEC_INSERT = (
    "INSERT INTO memories_vec(memory_id, embedding, project, type, tier, created) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
VEC_GET = "SELECT embedding FROM memories_vec WHERE memory_id = ?"
HAS_VEC = "SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'"
# vec0 KNN with metadata filters (global memories are stored with project '').
KNN = ("SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? "
       "AND type = ? AND project = ?")
# -- the vector log (schema step 0008): what a warm process's index syncs from -----------
# Every vector write records its memory's id under the next sequence number, in the same
# transaction (`seq` is indexed: the max is one lookup).
LOG_BUMP = ("INSERT INTO vector_log(memory_id, seq) SELECT ?, coalesce(max(seq), 0) + 1 "
            "FROM vector_log WHERE true ON CONFLICT(memory_id) DO UPDATE SET seq = excluded.seq")
ALLOWED = "SELECT m.id FROM memories m WHERE {where}"
# sqlite-vec's own cosine distance of each candidate (the same float32 arithmetic as its
# KNN scan), so an answer from memory orders exactly as the store's would.
DISTANCES = "SELECT column1, vec_distance_cosine(column2, ?) FROM (VALUES {rows})"
DISTANCE_BATCH = 4_000
CURRENT_ACTIVE = f"SELECT {COLUMNS} FROM memories m WHERE id = ? AND {CURRENT}"
# The memories this one replaced (validity in time: `hippo show`'s chain).
REPLACED = f"SELECT {COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY valid_to, id"
# -- provenance links ------------------------------------------------------------------
SOURCES = (
    "SELECT s.chunk_id, c.session_id, e.session_key, c.source_path, c.line_start, c.line_end, "
    "c.started_at, c.text FROM memory_sources s LEFT JOIN echo_chunks c ON c.id = s.chunk_id "
    "LEFT JOIN echo_sessions e ON e.id = c.session_id WHERE s.memory_id = ? ORDER BY s.chunk_id"
)
CHUNK_IDS = "SELECT chunk_id FROM memory_sources WHERE memory_id = ? ORDER BY chunk_id"
LINK = "INSERT OR IGNORE INTO memory_sources(memory_id, chunk_id, added_at) VALUES (?, ?, ?)"
UNLINK = "DELETE FROM memory_sources WHERE memory_id = ? AND chunk_id = ?"
LINKED_TO = ("SELECT DISTINCT memory_id FROM memory_sources WHERE chunk_id IN "
             "(SELECT value FROM json_each(?)) ORDER BY memory_id")


def _json_list(values: Iterable[Any]) -> str:
    import orjson

    return orjson.dumps(list(values)).decode()


def _blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()

# What `hippo extract` reads of Echo: the chunks past its watermark, session by session.
PENDING = "SELECT id, session_id FROM echo_chunks WHERE id > ? ORDER BY id"
SESSION = ("SELECT id, session_key, project, format, started_at, parent_key FROM echo_sessions "
           "WHERE id = ?")
SESSION_BY_KEY = "SELECT id FROM echo_sessions WHERE session_key = ?"
SEGMENT = ("SELECT id, seq, source_path, roles, line_start, line_end, message_ids, started_at, "
           "text FROM echo_chunks WHERE session_id = ? AND id BETWEEN ? AND ? ORDER BY seq, id")
SESSION_RANGE = "SELECT min(id) AS first, max(id) AS last FROM echo_chunks WHERE session_id = ?"


class SqliteMemories:
    def __init__(self, db: Sql) -> None:
        self.db = db

    # -- rows ------------------------------------------------------------------------
    def get(self, memory_id: int) -> Row | None:
        return self.db.row(GET, (memory_id,))

    def get_many(self, ids: Sequence[int]) -> list[Row]:
        return self.db.rows(GET_MANY.format(marks=",".join("?" * len(ids))), list(ids))

    def active_in_scope(self, project: str | None) -> int:
        return int(self.db.scalar(ACTIVE_IN_SCOPE, (project,)) or 0)

    def exists(self, memory_id: int) -> bool:
        return bool(self.db.scalar(EXISTS, (memory_id,)))

    def insert(self, values: dict[str, Any]) -> int:
        self.db.execute(INSERT, values)
        return int(values["id"]) if values["id"] is not None else self.db.last_id()

    def find_same(self, dedup_key: str) -> Row | None:
        return self.db.row(FIND_SAME, (dedup_key,))

    def reinforce(self, memory_id: int, *, stamp: str, confidence: float, importance: float,
                  tags: str, source: str | None) -> None:
        self.db.execute(REINFORCE, (stamp, stamp, confidence, importance, tags, source,
                                    memory_id))

    def update(self, memory_id: int, values: dict[str, Any]) -> None:
        bad = set(values) - UPDATABLE
        if bad:
            raise ValueError(f"not a memory column: {min(bad)}")
        sets = ", ".join(f"{k} = :{k}" for k in values)  # names checked against UPDATABLE
        self.db.execute(UPDATE.format(sets=sets), {**values, "id": memory_id})

    def restore(self, values: dict[str, Any]) -> None:
        self.db.execute(RESTORE, values)

    def delete(self, memory_id: int) -> None:
        self.db.execute(DELETE_ROW, (memory_id,))

    def erase(self, memory_id: int, stamp: str) -> None:
        self.db.execute(SECURE_DELETE)
        self.drop_vector(memory_id)
        self.db.execute(ERASE, (f"purged:{memory_id}", stamp, memory_id))
        self.db.execute(UNLINK_ALL, (memory_id,))

    def optimize_text_index(self) -> None:
        self.db.execute(FTS_OPTIMIZE)

    def defer_references(self) -> None:
        self.db.execute(DEFER_FOREIGN_KEYS)

    def active_elsewhere(self, project: str | None) -> int:
        return int(self.db.scalar(ACTIVE_ELSEWHERE, (project,)) or 0)

    def listing(self, where: MemoryFilter, limit: int = 0) -> list[Row]:
        from hippo.store.sqlite.filters import where as where_sql

        clause, params = where_sql(where)
        sql = LISTING.format(where=clause)
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        return self.db.rows(sql, params)

    def export_rows(self) -> Iterator[Row]:
        import apsw

        cur = self.db.execute(EXPORT)
        try:
            names = [d[0] for d in cur.getdescription()]
        except apsw.ExecutionCompleteError:  # no memories at all: nothing to export
            return
        try:  # a damaged page met half way is the store's error, said as hippo says it
            for row in cur:
                yield dict(zip(names, row))
        except apsw.Error as exc:
            from hippo.store.sqlite.errors import translate

            raise translate(exc, self.db.path) from exc

    def held(self, ids: Iterable[int]) -> dict[int, str]:
        return dict(self.db.execute(HELD, (_json_list(sorted(ids)),)))

    def references(self) -> list[Row]:
        return self.db.rows(REFERENCES)

    def citing_session(self, session_key: str) -> list[int]:
        return [r[0] for r in self.db.execute(CITING_SESSION, (session_key,))]

    def pending_tasks(self, project: str | None, tag: str) -> list[Row]:
        return self.db.rows(PENDING_TASKS, (project, tag))

    def drop_unused_cache(self, hashes: Sequence[str]) -> int:
        listed = _json_list(hashes)
        self.db.execute(DROP_CACHED, (listed, listed, listed))
        return self.db.changes()

    # -- vectors -----------------------------------------------------------------------
    def put_vector(self, memory_id: int, vector: np.ndarray, *, project: str, type: str,
                   tier: str, created: int) -> None:
        self.db.execute(VEC_DELETE, (memory_id,))
        self.db.execute(VEC_INSERT, (memory_id, _blob(vector), project, type, tier, created))
        self._log_vector(memory_id)

    def drop_vector(self, memory_id: int) -> None:
        self.db.execute(VEC_DELETE, (memory_id,))
        self._log_vector(memory_id)

    def _log_vector(self, memory_id: int) -> None:
        try:
            self.db.execute(LOG_BUMP, (memory_id,))
        except apsw.SQLError as exc:  # a file opened without its schema steps (tests)
            if "no such table: vector_log" not in str(exc):
                raise

    def vector(self, memory_id: int) -> np.ndarray | None:
        blob = self.db.scalar(VEC_GET, (memory_id,))
        if blob is None:
            return None
        import numpy as np

        return np.frombuffer(blob, dtype="<f4")

    def has_vectors(self) -> bool:
        return bool(self.db.scalar(HAS_VEC))

    def nearest(self, vector: np.ndarray, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        return [(r["memory_id"], float(r["distance"]))
                for r in self.db.rows(KNN, (_blob(vector), k, type, project))]

    def current_active(self, memory_id: int) -> Row | None:
        return self.db.row(CURRENT_ACTIVE, (memory_id,))

    def replaced(self, memory_id: int) -> list[Row]:
        return self.db.rows(REPLACED, (memory_id,))

    # -- provenance links ----------------------------------------------------------------
    def sources(self, memory_id: int) -> list[Row]:
        return self.db.rows(SOURCES, (memory_id,))

    def chunk_ids(self, memory_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(CHUNK_IDS, (memory_id,))]

    def link(self, memory_id: int, chunk_id: int, stamp: str) -> None:
        self.db.execute(LINK, (memory_id, chunk_id, stamp))

    def unlink(self, memory_id: int, chunk_id: int) -> None:
        self.db.execute(UNLINK, (memory_id, chunk_id))

    def linked_to(self, chunk_ids: Iterable[int]) -> list[int]:
        return [r[0] for r in self.db.execute(LINKED_TO, (_json_list(sorted(chunk_ids)),))]

    # -- what `hippo extract` reads of Echo --------------------------------------------
    def chunks_after(self, after: int) -> list[Row]:
        return self.db.rows(PENDING, (after,))

    def session(self, session_id: int) -> Row | None:
        return self.db.row(SESSION, (session_id,))

    def session_id(self, session_key: str) -> int | None:
        sid = self.db.scalar(SESSION_BY_KEY, (session_key,))
        return None if sid is None else int(sid)

    def session_span(self, session_id: int) -> tuple[int | None, int | None]:
        row = self.db.row(SESSION_RANGE, (session_id,))
        return (row["first"], row["last"]) if row else (None, None)

    def segment(self, session_id: int, first: int, last: int) -> list[Row]:
        return self.db.rows(SEGMENT, (session_id, first, last))

    # -- the vector log: a warm process's in-memory index syncs from it ----------------
    def vector_sync(self, known: tuple[Any, ...] | None, seq: int,
                    load: Callable[[tuple[Any, ...], dict[str, int], Iterable[tuple[Any, ...]]],
                                   None]
                    ) -> VectorSync:
        """`hippo.store.sqlite.vector_log.sync` over this store's connection."""
        return vector_log.sync(self.db, known, seq, load)

    def allowed_ids(self, filters: SearchFilters) -> list[int]:
        """Every memory a Brain search with `filters` may return (active, in scope)."""
        from hippo.store.sqlite.filters import memory_where

        where_, params = memory_where(filters)
        return [r[0] for r in self.db.execute(ALLOWED.format(where=where_), params)]

    def vector_distances(self, query: bytes, vectors: Sequence[tuple[int, bytes]]
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
