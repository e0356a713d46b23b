"""Brain memories: insert, read, update, status, provenance links.

Rows are the `memories` columns as stored (`tags`/`source` as JSON text); the SPEC record
is built from them by `hippo.memory.records.to_record`. Which memories a listing or a search
covers is a `MemoryFilter` (`hippo.store.filters`), made a WHERE clause by `hippo.store.clauses`. Written
once for both backends (`hippo.store.sql`); their vectors are `hippo.store.vectors`'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.filters import MemoryFilter


# A memory record's fields, in its order (SPEC; `hippo.memory.records` builds the record).
FIELDS = (
    "id", "text", "type", "tier", "project", "tags", "importance", "author", "status",
    "pinned", "canonical", "confidence", "created_at", "updated_at", "confirmed_at",
    "verified_at", "consolidated_into", "superseded_by", "source", "valid_from", "valid_to",
)
COLUMNS = ", ".join(FIELDS)  # the record's fields, in its order
GET = f"SELECT {COLUMNS} FROM memories WHERE id = ?"
GET_MANY = f"SELECT {COLUMNS} FROM memories WHERE {{ids}} ORDER BY id"
ACTIVE_IN_SCOPE = ("SELECT count(*) FROM memories WHERE status = 'active' AND "
                   "(project IS NULL OR project IS NOT DISTINCT FROM ?)")
EXISTS = "SELECT 1 FROM memories WHERE id = ?"
FIND_SAME = (
    f"SELECT {COLUMNS} FROM memories WHERE dedup_key = ? AND status IN ('active', 'done') "
    "ORDER BY id LIMIT 1"
)
_COLUMNS = (
    "id", "text", "type", "tier", "project", "tags", "importance", "author", "status",
    "pinned", "canonical", "confidence", "created_at", "updated_at", "confirmed_at",
    "verified_at", "consolidated_into", "superseded_by", "source", "dedup_key",
    "content_hash", "valid_from", "valid_to")
INSERT = (f"INSERT INTO memories({', '.join(_COLUMNS)}) VALUES ("
          + ", ".join(f":{c}" for c in _COLUMNS) + ") RETURNING id")
REINFORCE = (
    "UPDATE memories SET confirmed_at = ?, updated_at = ?, confidence = ?, importance = ?, "
    "tags = ?, source = ? WHERE id = ?"
)
# The columns `update` may set (its SET clause is built from these names only).
UPDATABLE = frozenset(_COLUMNS) - {"id", "created_at"}
UPDATE = "UPDATE memories SET {sets} WHERE id = :id"
RESTORE = ("UPDATE memories SET " + ", ".join(f"{c} = :{c}" for c in _COLUMNS[1:])
           + " WHERE id = :id")
DELETE_ROW = "DELETE FROM memories WHERE id = ?"
ERASE = (
    "UPDATE memories SET text = '', tags = '[]', source = NULL, status = 'deleted', "
    "dedup_key = ?, content_hash = '', updated_at = ? WHERE id = ?"
)
UNLINK_ALL = "DELETE FROM memory_sources WHERE memory_id = ?"
ACTIVE_ELSEWHERE = ("SELECT count(*) FROM memories WHERE status = 'active' AND project "
                    "IS NOT NULL AND project IS DISTINCT FROM ?")
LISTING = f"SELECT {COLUMNS} FROM memories m WHERE {{where}} ORDER BY id DESC"
EXPORT = f"SELECT {COLUMNS} FROM memories ORDER BY id"
HELD = "SELECT id, dedup_key FROM memories WHERE id {in_list}"
REFERENCES = ("SELECT id, superseded_by, consolidated_into FROM memories "
              "WHERE superseded_by IS NOT NULL OR consolidated_into IS NOT NULL ORDER BY id")
# Candidates only: `source` is JSON text, read in Python (an invalid one never raises).
CITING_CANDIDATES = ("SELECT id, source FROM memories WHERE source IS NOT NULL "
                     "AND source LIKE '%session%' ORDER BY id")
# Tasks a compaction summary listed as pending.
PENDING_TASKS = ("SELECT id, source FROM memories m WHERE status = 'active' AND type = 'task' "
                 "AND author = 'machine' AND project IS NOT DISTINCT FROM ? AND {tagged}")
# Cache rows of these hashes (one list, three times) that no stored text still has.
DROP_CACHED = (
    "DELETE FROM embed_cache WHERE content_hash {in_list} "
    "AND content_hash NOT IN (SELECT content_hash FROM memories WHERE content_hash "
    "{in_list}) AND content_hash NOT IN (SELECT content_hash FROM "
    "echo_chunks WHERE content_hash {in_list})"
)
CURRENT_ACTIVE = f"SELECT {COLUMNS} FROM memories m WHERE id = ? AND {{current}}"
# The memories this one replaced (validity in time: `hippo show`'s chain).
REPLACED = f"SELECT {COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY valid_to, id"
# -- provenance links ------------------------------------------------------------------
# A chunk of a session this user may not see (`visible`) is shown as a forgotten one is.
SOURCES = (
    "SELECT s.chunk_id, c.session_id, e.session_key, c.source_path, c.line_start, c.line_end, "
    "c.started_at, c.text FROM memory_sources s LEFT JOIN (echo_chunks c JOIN echo_sessions e "
    "ON e.id = c.session_id AND {visible}) ON c.id = s.chunk_id WHERE s.memory_id = ? "
    "ORDER BY s.chunk_id"
)
CHUNK_IDS = "SELECT chunk_id FROM memory_sources WHERE memory_id = ? ORDER BY chunk_id"
LINK = ("INSERT INTO memory_sources(memory_id, chunk_id, added_at) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING")
UNLINK = "DELETE FROM memory_sources WHERE memory_id = ? AND chunk_id = ?"
LINKED_TO = ("SELECT DISTINCT memory_id FROM memory_sources WHERE chunk_id {in_list} "
             "ORDER BY memory_id")



def named_sessions(source: str) -> list[str] | None:
    """The sessions a memory's source (JSON) names under "session": an array's items, an
    object's values, or the one value (SQLite's json_each); None when it names none."""
    import orjson

    try:
        doc = orjson.loads(source)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or "session" not in doc:
        return None
    named = doc["session"]
    values = named if isinstance(named, list) else (
        list(named.values()) if isinstance(named, dict) else [named])
    return [v for v in values if isinstance(v, str)]


class Memories(Repository):
    """Brain memories: insert, read, update, status, provenance links."""

    # -- rows ------------------------------------------------------------------------
    def get(self, memory_id: int) -> Row | None:
        """The memory's row, or None."""
        return self.db.row(GET, (memory_id,))

    def get_many(self, ids: Sequence[int]) -> list[Row]:
        """The rows of those of `ids` that exist, by id."""
        if not ids:
            return []
        params: list[Any] = []
        clause = self.db.dialect.within("id", ids, params)
        return self.db.rows(GET_MANY.format(ids=clause), params)

    def active_in_scope(self, project: str | None) -> int:
        """Active memories a search of `project` sees: its own and the global ones."""
        return int(self.db.scalar(ACTIVE_IN_SCOPE, (project,)) or 0)

    def exists(self, memory_id: int) -> bool:
        """Whether a row holds this id (whatever its status)."""
        return bool(self.db.scalar(EXISTS, (memory_id,)))

    def insert(self, values: dict[str, Any]) -> int:
        """Store a new row (its id kept when given); returns its id."""
        row = dict(values)
        if row.get("id") is None and self.db.dialect.next_id:
            row["id"] = int(self.db.scalar(self.db.dialect.next_id))
        new_id = int(self.db.rows(INSERT, row)[0]["id"])
        if self.db.dialect.mark_id:
            self.db.execute(self.db.dialect.mark_id, (str(new_id),))
        return new_id

    def find_same(self, dedup_key: str) -> Row | None:
        """The oldest active or done memory with this dedup key."""
        return self.db.row(FIND_SAME, (dedup_key,))

    def reinforce(self, memory_id: int, *, stamp: str, confidence: float, importance: float,
                  tags: str, source: str | None) -> None:
        """Record a memory seen again: confirmed and updated at `stamp`, richer fields."""
        self.db.execute(REINFORCE, (stamp, stamp, confidence, importance, tags, source,
                                    memory_id))

    def update(self, memory_id: int, values: dict[str, Any]) -> None:
        """Set these columns (names of the SPEC record, dedup_key, content_hash, updated_at)."""
        bad = set(values) - UPDATABLE
        if bad:
            raise ValueError(f"not a memory column: {min(bad)}")
        if not values:
            return
        sets = ", ".join(f"{k} = :{k}" for k in values)  # names checked against UPDATABLE
        self.db.execute(UPDATE.format(sets=sets), {**values, "id": memory_id})

    def restore(self, values: dict[str, Any]) -> None:
        """Write every column of a row back exactly (an undo)."""
        self.db.execute(RESTORE, values)

    def delete(self, memory_id: int) -> None:
        """Remove the row entirely (undoing its creation)."""
        self.db.execute(DELETE_ROW, (memory_id,))

    def erase(self, memory_id: int, stamp: str) -> None:
        """Hard forget: blank the row's text, tags, provenance and links; freed space is
        zeroed (the caller drops its vector: `hippo.store.vectors`)."""
        if self.db.dialect.secure_delete:
            self.db.execute(self.db.dialect.secure_delete)
        self.db.execute(ERASE, (f"purged:{memory_id}", stamp, memory_id))
        self.db.execute(UNLINK_ALL, (memory_id,))

    def defer_references(self) -> None:
        """Until the commit, allow references to memories stored later in the transaction."""
        self.db.execute(self.db.dialect.defer_references)

    def active_elsewhere(self, project: str | None) -> int:
        """Active memories of other projects than `project` (global ones not counted)."""
        return int(self.db.scalar(ACTIVE_ELSEWHERE, (project,)) or 0)

    def listing(self, where: MemoryFilter, limit: int = 0) -> list[Row]:
        """The memories `where` selects, newest id first; `limit` 0 is all."""
        from hippo.store.clauses import where as where_sql

        clause, params = where_sql(self.db.dialect, where)
        sql = LISTING.format(where=clause)
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        return self.db.rows(sql, params)

    def export_rows(self) -> Iterator[Row]:
        """Every row, in id order (streamed)."""
        return self.db.stream(EXPORT)

    def held(self, ids: Iterable[int]) -> dict[int, str]:
        """Of `ids`, those stored, with their dedup keys."""
        listed = sorted(ids)
        if not listed:
            return {}
        rows = self.db.rows(self._sql(HELD), (self.db.dialect.listed(listed),))
        return {int(r["id"]): str(r["dedup_key"]) for r in rows}

    def references(self) -> list[Row]:
        """id, superseded_by, consolidated_into of every memory that points at another, by id."""
        return self.db.rows(REFERENCES)

    def citing_session(self, session_key: str) -> list[int]:
        """Ids of memories whose `source` names this Echo session, in order."""
        return [int(r["id"]) for r in self.db.rows(CITING_CANDIDATES)
                if session_key in (named_sessions(r["source"]) or ())]

    def pending_tasks(self, project: str | None, tag: str) -> list[Row]:
        """id, source of active machine tasks of `project` tagged `tag`."""
        return self.db.rows(self._sql(PENDING_TASKS), (project, tag))

    def drop_unused_cache(self, hashes: Sequence[str]) -> int:
        """Erase the embedding cache rows of these content hashes that no memory and no
        Echo chunk still holds; how many went."""
        if not hashes:
            return 0
        listed = self.db.dialect.listed(hashes)
        self.db.execute(self._sql(DROP_CACHED), (listed, listed, listed))
        return self.db.changes()

    def current_active(self, memory_id: int) -> Row | None:
        """The memory's row if it is current: active, not superseded, its validity open."""
        return self.db.row(self._sql(CURRENT_ACTIVE), (memory_id,))

    def replaced(self, memory_id: int) -> list[Row]:
        """The memories this one superseded (their `superseded_by` is its id)."""
        return self.db.rows(REPLACED, (memory_id,))

    # -- provenance links to Echo chunks ------------------------------------------------
    def sources(self, memory_id: int) -> list[Row]:
        """The memory's linked chunks with their session, path, lines and text."""
        return self.db.rows(self._sql(SOURCES), (memory_id,))

    def chunk_ids(self, memory_id: int) -> list[int]:
        """Ids of the chunks linked to the memory, in order."""
        return [int(r["chunk_id"]) for r in self.db.rows(CHUNK_IDS, (memory_id,))]

    def link(self, memory_id: int, chunk_id: int, stamp: str) -> None:
        """Link a chunk to the memory (kept once)."""
        self.db.execute(LINK, (memory_id, chunk_id, stamp))

    def unlink(self, memory_id: int, chunk_id: int) -> None:
        """Remove a chunk's link to the memory."""
        self.db.execute(UNLINK, (memory_id, chunk_id))

    def linked_to(self, chunk_ids: Iterable[int]) -> list[int]:
        """Ids of the memories linked to any of these chunks, in order."""
        listed = sorted(chunk_ids)
        if not listed:
            return []
        return [int(r["memory_id"])
                for r in self.db.rows(self._sql(LINKED_TO), (self.db.dialect.listed(listed),))]
