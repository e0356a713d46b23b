"""PostgreSQL: brain memories: insert, read, update, status, provenance links."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hippo.records import FIELDS
from hippo.store.postgres.filters import CURRENT, OWN, VISIBLE
from hippo.store.postgres.vector import Vec

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.base import Row
    from hippo.store.memories import MemoryFilter
    from hippo.store.postgres.database import PgSql

COLUMNS = ", ".join(FIELDS)  # the record's fields, in its order
GET = f"SELECT {COLUMNS} FROM memories WHERE id = ?"
GET_MANY = f"SELECT {COLUMNS} FROM memories WHERE id = ANY(?)"
ACTIVE_IN_SCOPE = ("SELECT count(*) FROM memories WHERE status = 'active' AND "
                   "(project IS NULL OR project IS NOT DISTINCT FROM ?)")
EXISTS = "SELECT 1 FROM memories WHERE id = ?"
FIND_SAME = (
    f"SELECT {COLUMNS} FROM memories WHERE dedup_key = ? AND status IN ('active', 'done') "
    "ORDER BY id LIMIT 1"
)
_INSERT_COLUMNS = (
    "text", "type", "tier", "project", "tags", "importance", "author", "status", "pinned",
    "canonical", "confidence", "created_at", "updated_at", "confirmed_at", "verified_at",
    "consolidated_into", "superseded_by", "source", "dedup_key", "content_hash", "valid_from",
    "valid_to")
# A new row's id is SQLite's AUTOINCREMENT: one past the largest id the store ever held
# (a row's, the high-water mark's, or the identity's, which an import moves past every id
# it restored), taken under the writer lock. The mark is a row of `meta`, so a rolled-back
# transaction (a dry run, a killed process) takes no id with it, as in SQLite; a sequence
# would have moved for good. Deleted rows' ids are never given again.
LAST_ID = "memories.last_id"
NEXT_ID = (
    "SELECT greatest(coalesce((SELECT max(id) FROM memories), 0), "
    f"coalesce((SELECT value::bigint FROM meta WHERE key = '{LAST_ID}'), 0), "
    "coalesce(pg_sequence_last_value(pg_get_serial_sequence('memories', 'id')::regclass), 0)"
    ") + 1"
)
MARK_ID = (f"INSERT INTO meta(key, value) VALUES ('{LAST_ID}', ?) ON CONFLICT (key) "
           "DO UPDATE SET value = excluded.value "
           "WHERE meta.value::bigint < excluded.value::bigint")
INSERT = (f"INSERT INTO memories(id, {', '.join(_INSERT_COLUMNS)}) VALUES (:id, "
          + ", ".join(f":{c}" for c in _INSERT_COLUMNS) + ") RETURNING id")
REINFORCE = (
    "UPDATE memories SET confirmed_at = ?, updated_at = ?, confidence = ?, "
    "importance = ?, tags = ?, source = ? WHERE id = ?"
)
# The columns `update` may set (its SET clause is built from these names only).
UPDATABLE = frozenset({
    "text", "type", "tier", "project", "tags", "importance", "status", "pinned", "canonical",
    "confidence", "confirmed_at", "verified_at", "consolidated_into", "superseded_by",
    "source", "author", "dedup_key", "content_hash", "updated_at", "valid_from", "valid_to"})
UPDATE = "UPDATE memories SET {sets} WHERE id = :id"
RESTORE = (
    "UPDATE memories SET text = :text, type = :type, tier = :tier, "
    "project = :project, tags = :tags, importance = :importance, "
    "author = :author, status = :status, pinned = :pinned, "
    "canonical = :canonical, confidence = :confidence, created_at = :created_at, "
    "updated_at = :updated_at, confirmed_at = :confirmed_at, "
    "verified_at = :verified_at, consolidated_into = :consolidated_into, "
    "superseded_by = :superseded_by, source = :source, dedup_key = :dedup_key, "
    "content_hash = :content_hash, valid_from = :valid_from, valid_to = :valid_to "
    "WHERE id = :id"
)
DELETE_ROW = "DELETE FROM memories WHERE id = ?"
ERASE = (
    "UPDATE memories SET text = '', tags = '[]', source = NULL, status = 'deleted', "
    "dedup_key = ?, content_hash = '', updated_at = ? WHERE id = ?"
)
UNLINK_ALL = "DELETE FROM memory_sources WHERE memory_id = ?"
# The memories' references to each other are DEFERRABLE (schema p0001_core).
DEFER_FOREIGN_KEYS = "SET CONSTRAINTS ALL DEFERRED"
ACTIVE_ELSEWHERE = ("SELECT count(*) FROM memories WHERE status = 'active' AND project "
                    "IS NOT NULL AND project IS DISTINCT FROM ?")
LISTING = f"SELECT {COLUMNS} FROM memories m WHERE {{where}} ORDER BY id DESC"
# Export reads in pages of ids, so a large store is never held in memory at once.
EXPORT_PAGE = f"SELECT {COLUMNS} FROM memories WHERE id > ? ORDER BY id LIMIT ?"
EXPORT_PAGE_ROWS = 1000
HELD = "SELECT id, dedup_key FROM memories WHERE id = ANY(?)"
REFERENCES = ("SELECT id, superseded_by, consolidated_into FROM memories "
              "WHERE superseded_by IS NOT NULL OR consolidated_into IS NOT NULL")
# Candidates only: `source` is JSON text, read in Python (an invalid one never raises).
CITING_CANDIDATES = ("SELECT id, source FROM memories WHERE source IS NOT NULL "
                     "AND strpos(source, 'session') > 0 ORDER BY id")
# Tasks a compaction summary listed as pending (`tags` is a JSON array as text).
PENDING_TASKS = ("SELECT id, source FROM memories WHERE status = 'active' AND type = 'task' "
                 "AND author = 'machine' AND project IS NOT DISTINCT FROM ? "
                 "AND jsonb_exists(tags::jsonb, ?)")
# Cache rows of these hashes that no stored text still has.
DROP_CACHED = (
    "DELETE FROM embed_cache WHERE content_hash = ANY(:h) "
    "AND content_hash NOT IN (SELECT content_hash FROM memories WHERE content_hash = ANY(:h)) "
    "AND content_hash NOT IN (SELECT content_hash FROM echo_chunks "
    "WHERE content_hash = ANY(:h))"
)
# -- vectors (memories_vec: memory_id, embedding; filters join memories) ----------------
VEC_DELETE = "DELETE FROM memories_vec WHERE memory_id = ?"
VEC_PUT = ("INSERT INTO memories_vec(memory_id, embedding) VALUES (?, ?) "
           "ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding")
VEC_GET = "SELECT embedding FROM memories_vec WHERE memory_id = ?"
HAS_VEC = "SELECT to_regclass('memories_vec') IS NOT NULL"
# Cosine distance, as sqlite-vec's; global memories are project '' here too.
KNN = ("SELECT v.memory_id, v.embedding <=> :q AS distance FROM memories_vec v "
       "JOIN memories m ON m.id = v.memory_id "
       "WHERE m.type = :type AND coalesce(m.project, '') = :project "
       "ORDER BY v.embedding <=> :q, v.memory_id LIMIT :k")
CURRENT_ACTIVE = f"SELECT {COLUMNS} FROM memories m WHERE id = ? AND {CURRENT}"
# The memories this one replaced (validity in time: `hippo show`'s chain).
REPLACED = f"SELECT {COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY valid_to, id"
# -- provenance links ------------------------------------------------------------------
# A chunk of a session this user may not see (`VISIBLE`) is shown as a forgotten one is.
SOURCES = (
    "SELECT s.chunk_id, c.session_id, e.session_key, c.source_path, c.line_start, c.line_end, "
    "c.started_at, c.text FROM memory_sources s LEFT JOIN (echo_chunks c JOIN echo_sessions e "
    f"ON e.id = c.session_id AND {VISIBLE}) ON c.id = s.chunk_id WHERE s.memory_id = ? "
    "ORDER BY s.chunk_id"
)
CHUNK_IDS = "SELECT chunk_id FROM memory_sources WHERE memory_id = ? ORDER BY chunk_id"
LINK = ("INSERT INTO memory_sources(memory_id, chunk_id, added_at) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING")
UNLINK = "DELETE FROM memory_sources WHERE memory_id = ? AND chunk_id = ?"
LINKED_TO = ("SELECT DISTINCT memory_id FROM memory_sources WHERE chunk_id = ANY(?) "
             "ORDER BY memory_id")

# What `hippo extract` reads of Echo: the chunks past its watermark, session by session.
PENDING = "SELECT id, session_id FROM echo_chunks WHERE id > ? ORDER BY id"
# On a team store, each member's extraction reads their own sessions only (its watermark
# is theirs too: `hippo.store.meta.PER_USER`), even when the team shares Echo.
OWN_PENDING = ("SELECT c.id, c.session_id FROM echo_chunks c JOIN echo_sessions e "
               f"ON e.id = c.session_id WHERE c.id > ? AND {OWN} ORDER BY c.id")
SESSION = ("SELECT id, session_key, project, format, started_at, parent_key FROM echo_sessions "
           "WHERE id = ?")
# A key the user may see (their own session first: a key is unique per owner).
SESSION_BY_KEY = (f"SELECT e.id FROM echo_sessions e WHERE e.session_key = ? AND {VISIBLE} "
                  f"ORDER BY ({OWN}) DESC, e.id LIMIT 1")
# On a team store, only one's own: what a member forgets or extracts by key is theirs.
OWN_SESSION_BY_KEY = f"SELECT e.id FROM echo_sessions e WHERE e.session_key = ? AND {OWN}"
SEGMENT = ("SELECT id, seq, source_path, roles, line_start, line_end, message_ids, started_at, "
           "text FROM echo_chunks WHERE session_id = ? AND id BETWEEN ? AND ? "
           "ORDER BY seq, id")
SESSION_RANGE = ("SELECT min(id) AS first, max(id) AS last FROM echo_chunks "
                 "WHERE session_id = ?")


def _blob(vector: np.ndarray) -> Vec:
    import numpy as np

    return Vec(np.asarray(vector, dtype="<f4").tobytes())


def _cites(source: str, session_key: str) -> bool:
    """Whether a `source` (JSON text) names this session, as SQLite's
    `json_each(source, '$.session')` finds it: the value, or one of its items."""
    import orjson

    try:
        obj = orjson.loads(source)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(obj, dict) or "session" not in obj:
        return False
    value = obj["session"]
    if isinstance(value, list):
        return session_key in [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return session_key in [v for v in value.values() if isinstance(v, str)]
    return isinstance(value, str) and value == session_key


class PgMemories:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    # -- rows ------------------------------------------------------------------------
    def get(self, memory_id: int) -> Row | None:
        return self.db.row(GET, (memory_id,))

    def get_many(self, ids: Sequence[int]) -> list[Row]:
        return self.db.rows(GET_MANY, (list(ids),)) if ids else []

    def active_in_scope(self, project: str | None) -> int:
        return int(self.db.scalar(ACTIVE_IN_SCOPE, (project,)) or 0)

    def exists(self, memory_id: int) -> bool:
        return bool(self.db.scalar(EXISTS, (memory_id,)))

    def insert(self, values: dict[str, Any]) -> int:
        row = dict(values)
        if row.get("id") is None:
            row["id"] = int(self.db.scalar(NEXT_ID))
        new_id = int(self.db.scalar(INSERT, row))
        self.db.execute(MARK_ID, (str(new_id),))
        return new_id

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
        if not values:
            return
        sets = ", ".join(f"{k} = :{k}" for k in values)  # names checked against UPDATABLE
        self.db.execute(UPDATE.format(sets=sets), {**values, "id": memory_id})

    def restore(self, values: dict[str, Any]) -> None:
        self.db.execute(RESTORE, values)

    def delete(self, memory_id: int) -> None:
        self.db.execute(DELETE_ROW, (memory_id,))

    def erase(self, memory_id: int, stamp: str) -> None:
        self.drop_vector(memory_id)
        self.db.execute(ERASE, (f"purged:{memory_id}", stamp, memory_id))
        self.db.execute(UNLINK_ALL, (memory_id,))

    def optimize_text_index(self) -> None:
        """Nothing to merge: the generated `tsv` of an erased row is empty at once, and the
        old row versions (and their index entries) go with `health.reclaim` (VACUUM)."""

    def defer_references(self) -> None:
        self.db.execute(DEFER_FOREIGN_KEYS)

    def active_elsewhere(self, project: str | None) -> int:
        return int(self.db.scalar(ACTIVE_ELSEWHERE, (project,)) or 0)

    def listing(self, where: MemoryFilter, limit: int = 0) -> list[Row]:
        from hippo.store.postgres.filters import where as where_sql

        clause, params = where_sql(where)
        sql = LISTING.format(where=clause)
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        return self.db.rows(sql, params)

    def export_rows(self) -> Iterator[Row]:
        after = 0
        while True:
            page = self.db.rows(EXPORT_PAGE, (after, EXPORT_PAGE_ROWS))
            yield from page
            if len(page) < EXPORT_PAGE_ROWS:
                return
            after = int(page[-1]["id"])

    def held(self, ids: Iterable[int]) -> dict[int, str]:
        listed = sorted(ids)
        if not listed:
            return {}
        return {int(r["id"]): str(r["dedup_key"]) for r in self.db.rows(HELD, (listed,))}

    def references(self) -> list[Row]:
        return self.db.rows(REFERENCES)

    def citing_session(self, session_key: str) -> list[int]:
        return [int(r["id"]) for r in self.db.rows(CITING_CANDIDATES)
                if _cites(r["source"], session_key)]

    def pending_tasks(self, project: str | None, tag: str) -> list[Row]:
        return self.db.rows(PENDING_TASKS, (project, tag))

    def drop_unused_cache(self, hashes: Sequence[str]) -> int:
        if not hashes:
            return 0
        self.db.execute(DROP_CACHED, {"h": list(hashes)})
        return self.db.changes()

    # -- vectors -----------------------------------------------------------------------
    def put_vector(self, memory_id: int, vector: np.ndarray, *, project: str, type: str,
                   tier: str, created: int) -> None:
        # project, type, tier, created: read from `memories` itself by the vector queries
        self.db.execute(VEC_PUT, (memory_id, _blob(vector)))

    def drop_vector(self, memory_id: int) -> None:
        if self.has_vectors():
            self.db.execute(VEC_DELETE, (memory_id,))

    def vector(self, memory_id: int) -> np.ndarray | None:
        if not self.has_vectors():
            return None
        blob = self.db.scalar(VEC_GET, (memory_id,))
        if blob is None:
            return None
        import numpy as np

        return np.frombuffer(bytes(blob), dtype="<f4")

    def has_vectors(self) -> bool:
        return bool(self.db.scalar(HAS_VEC))

    def nearest(self, vector: np.ndarray, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        params = {"q": _blob(vector), "k": k, "type": type, "project": project}
        return [(int(r["memory_id"]), float(r["distance"])) for r in self.db.rows(KNN, params)]

    def current_active(self, memory_id: int) -> Row | None:
        return self.db.row(CURRENT_ACTIVE, (memory_id,))

    def replaced(self, memory_id: int) -> list[Row]:
        return self.db.rows(REPLACED, (memory_id,))

    # -- provenance links ----------------------------------------------------------------
    def sources(self, memory_id: int) -> list[Row]:
        return self.db.rows(SOURCES, (memory_id,))

    def chunk_ids(self, memory_id: int) -> list[int]:
        return [int(r["chunk_id"]) for r in self.db.rows(CHUNK_IDS, (memory_id,))]

    def link(self, memory_id: int, chunk_id: int, stamp: str) -> None:
        self.db.execute(LINK, (memory_id, chunk_id, stamp))

    def unlink(self, memory_id: int, chunk_id: int) -> None:
        self.db.execute(UNLINK, (memory_id, chunk_id))

    def linked_to(self, chunk_ids: Iterable[int]) -> list[int]:
        listed = sorted(chunk_ids)
        if not listed:
            return []
        return [int(r["memory_id"]) for r in self.db.rows(LINKED_TO, (listed,))]

    # -- what `hippo extract` reads of Echo --------------------------------------------
    def chunks_after(self, after: int) -> list[Row]:
        return self.db.rows(OWN_PENDING if self.db.team else PENDING, (after,))

    def session(self, session_id: int) -> Row | None:
        return self.db.row(SESSION, (session_id,))

    def session_id(self, session_key: str) -> int | None:
        sid = self.db.scalar(OWN_SESSION_BY_KEY if self.db.team else SESSION_BY_KEY,
                             (session_key,))
        return None if sid is None else int(sid)

    def session_span(self, session_id: int) -> tuple[int | None, int | None]:
        row = self.db.row(SESSION_RANGE, (session_id,))
        return (row["first"], row["last"]) if row else (None, None)

    def segment(self, session_id: int, first: int, last: int) -> list[Row]:
        return self.db.rows(SEGMENT, (session_id, first, last))
