"""Echo: transcript sessions and their chunks, verbatim, once for both backends
(`hippo.store.sql`): what ingest writes, what search and the extractor read, what
`hippo import` restores; and the record every read returns (one field list for search
results and the export).

On PostgreSQL a session belongs to the user who ingested it (`owner`). Ingest's own reads
and writes (find, add, the chunks of a re-read file) are always that user's (`{own}`);
every other read sees what `{visible}` allows: the user's own sessions, or everyone's once
the team turned sharing on. On SQLite both are every session.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.store.sql import Repository

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.base import Row

# A chunk's record, in this order: what `hippo echo` shows (with `seq`) and what
# `hippo export --store echo` writes (without it).
RECORD_FIELDS = ("id", "session", "format", "project", "source_path", "roles", "line_start",
                 "line_end", "message_ids", "started_at", "ended_at", "seq", "text")
EXPORT_FIELDS = tuple(f for f in RECORD_FIELDS if f != "seq")
# A store many users share (PostgreSQL) shows each user only the sessions they ingested,
# unless this meta key is "on": the team's switch, kept in the store (`hippo config --set`).
SHARED_KEY = "echo.shared"
SHARED_ON = "on"

SESSION_GET = "SELECT e.id FROM echo_sessions e WHERE e.session_key = ? AND {own}"
SESSION_INSERT = (
    "INSERT INTO echo_sessions(session_key, format, source_path, project, cwd, parent_key, "
    "agent, started_at, ended_at, messages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) RETURNING id"
)
SESSION_UPDATE = (
    "UPDATE echo_sessions SET messages = messages + ?, ended_at = coalesce(?, ended_at), "
    "started_at = coalesce(started_at, ?), cwd = coalesce(cwd, ?), "
    "project = coalesce(project, ?), agent = coalesce(agent, ?), "
    "parent_key = coalesce(parent_key, ?) WHERE id = ?"
)
SESSION_DELETE = "DELETE FROM echo_sessions AS e WHERE e.session_key = ? AND {visible}"
SESSION_MESSAGES = "SELECT message_ids, text FROM echo_chunks WHERE session_id = ? ORDER BY seq"
NEXT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM echo_chunks WHERE session_id = ?"
_COLUMNS = ("session_id, seq, source_path, project, roles, line_start, line_end, message_ids, "
            "started_at, ended_at, text, content_hash, created_at")
CHUNK_INSERT = f"INSERT INTO echo_chunks({_COLUMNS}) VALUES ({', '.join('?' * 13)}) RETURNING id"
# `hippo import`: a chunk under the id its export gave it.
CHUNK_PUT = f"INSERT INTO echo_chunks(id, {_COLUMNS}) VALUES ({', '.join('?' * 14)})"
HELD = "SELECT id FROM echo_chunks WHERE id {in_list} ORDER BY id"
DELETE_CHUNKS = "DELETE FROM echo_chunks WHERE id {in_list}"
# The one column list: a row of it is a record's fields (`RECORD_FIELDS`) plus `session_id`.
CHUNK_COLUMNS = (
    "c.id, e.session_key AS session, e.format, c.project, c.source_path, c.roles, c.line_start, "
    "c.line_end, c.message_ids, c.started_at, c.ended_at, c.seq, c.session_id, c.text"
)
FROM = "FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id"
CHUNKS_OF_FILE = f"SELECT c.id {FROM} WHERE c.source_path = ? AND {{own}} ORDER BY c.id"
SESSION_CHUNK_IDS = f"SELECT c.id {FROM} WHERE e.session_key = ? AND {{visible}} ORDER BY c.id"
OWN_SESSION_CHUNK_IDS = f"SELECT c.id {FROM} WHERE e.session_key = ? AND {{own}} ORDER BY c.id"
PROJECT_CHUNKS = (f"SELECT count(*) {FROM} WHERE c.project IS NOT DISTINCT FROM ? "
                  "AND {visible}")
ALL_CHUNKS = f"SELECT count(*) {FROM} WHERE {{visible}}"
CHUNKS_BY_ID = f"SELECT {CHUNK_COLUMNS} {FROM} WHERE c.id {{in_list}} AND {{visible}}"
NEIGHBOURS = (f"SELECT {CHUNK_COLUMNS} {FROM} WHERE c.session_id = ? AND c.seq BETWEEN ? AND ? "
              "AND c.id != ? AND {visible} ORDER BY c.seq")
EXPORT = f"SELECT {CHUNK_COLUMNS} {FROM} WHERE {{visible}} ORDER BY c.id"
# What `hippo extract` reads: the chunks past its watermark, session by session. On a team
# store, each member's extraction reads their own sessions only (its watermark is theirs
# too: `postgres.meta.PER_USER`), even when the team shares Echo.
PENDING = "SELECT id, session_id FROM echo_chunks WHERE id > ? ORDER BY id"
OWN_PENDING = f"SELECT c.id, c.session_id {FROM} WHERE c.id > ? AND {{own}} ORDER BY c.id"
SESSION = ("SELECT id, session_key, project, format, started_at, parent_key FROM echo_sessions "
           "WHERE id = ?")
# A key the user may see (their own session first: on PostgreSQL a key is unique per owner).
SESSION_BY_KEY = ("SELECT e.id FROM echo_sessions e WHERE e.session_key = ? AND {visible} "
                  "ORDER BY ({own}) DESC, e.id LIMIT 1")
SEGMENT = ("SELECT id, seq, source_path, roles, line_start, line_end, message_ids, started_at, "
           "text FROM echo_chunks WHERE session_id = ? AND id BETWEEN ? AND ? ORDER BY seq, id")
SESSION_RANGE = "SELECT min(id) AS first, max(id) AS last FROM echo_chunks WHERE session_id = ?"


@dataclass(slots=True)
class Chunk:
    """A run of consecutive messages rendered as `role: text` blocks, ready to embed: what
    ingest makes (`hippo.ingest.chunk`) and Echo stores."""

    text: str
    roles: list[str]
    line_start: int
    line_end: int
    message_ids: list[str]
    started_at: str | None
    ended_at: str | None
    session_id: str | None


def to_record(row: Mapping[str, Any], fields: Sequence[str] = RECORD_FIELDS) -> dict[str, Any]:
    """A chunk row as its record: `fields` in order, roles as a list, message ids parsed
    (a ValueError when they are not JSON)."""
    import orjson

    rec = {f: row[f] for f in fields}
    rec["roles"] = row["roles"].split(",") if row["roles"] else []
    rec["message_ids"] = orjson.loads(row["message_ids"]) if row["message_ids"] else []
    return rec


def to_export(row: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk row as `hippo export --store echo` writes it."""
    return to_record(row, EXPORT_FIELDS)


class Chunks(Repository):
    """Echo: transcript sessions and their chunks, verbatim.

    Rows (`get`) carry the record's fields plus `session_id`; records (`neighbours`,
    `export`) are `to_record`'s."""

    # -- sessions (the user's own: what their ingest writes) ---------------------------
    def find_session(self, key: str) -> int | None:
        """The id of this user's session named `key`, or None."""
        found = self.db.scalar(self._sql(SESSION_GET), (key,))
        return None if found is None else int(found)

    def add_session(self, key: str, *, fmt: str, source_path: str, project: str | None,
                    cwd: str | None, parent_key: str | None, agent: str | None,
                    started_at: str | None) -> int:
        """The id of the session named `key`, created (no messages yet) on first sight."""
        found = self.find_session(key)
        if found is not None:
            return found
        return int(self.db.scalar(SESSION_INSERT, (key, fmt, source_path, project, cwd,
                                                   parent_key, agent, started_at, started_at)))

    def update_session(self, session_id: int, *, messages: int, ended_at: str | None,
                       started_at: str | None, cwd: str | None, project: str | None,
                       agent: str | None, parent_key: str | None) -> None:
        """Count `messages` more, move its end to `ended_at`, fill the fields still unknown."""
        self.db.execute(SESSION_UPDATE, (messages, ended_at, started_at, cwd, project, agent,
                                         parent_key, session_id))

    def session_messages(self, session_id: int) -> list[tuple[list[str], str]]:
        """Each chunk of a session as (its message ids, its text), in order."""
        import orjson

        return [(orjson.loads(ids_json), text)
                for ids_json, text in self.db.execute(SESSION_MESSAGES, (session_id,))]

    def delete_session(self, key: str) -> None:
        """Delete the session named `key` (its chunks are deleted first)."""
        self.db.execute(self._sql(SESSION_DELETE), (key,))

    # -- chunks ----------------------------------------------------------------------
    def add(self, session_id: int, chunks: Sequence[Chunk], texts: Sequence[str],
            vectors: np.ndarray | None, *, source_path: str, project: str | None) -> list[int]:
        """Append chunks (and their vectors) to a session, continuing its sequence numbers;
        their new ids in order."""
        from hippo.store.codec import to_blob
        from hippo.timeutil import epoch, now_iso

        d = self.db.dialect
        seq = int(self.db.scalar(NEXT_SEQ, (session_id,)))
        stamp = now_iso()
        ids = []
        for i, (chunk, text) in enumerate(zip(chunks, texts)):
            cid = int(self.db.scalar(CHUNK_INSERT, _values(
                session_id, seq + i, source_path, project, chunk, text, stamp)))
            ids.append(cid)
            if vectors is not None:
                self.db.execute(d.chunk_vector, {
                    "id": cid, "vec": d.vector(to_blob(vectors[i])), "project": project or "",
                    "session": session_id, "started": epoch(chunk.started_at)})
        return ids

    def put(self, chunk_id: int, session_id: int, chunk: Chunk, *, source_path: str,
            project: str | None) -> None:
        """`hippo import`: append one chunk to its session (the next sequence number) under
        `chunk_id` (its vector goes apart: `hippo.store.health`)."""
        from hippo.timeutil import now_iso

        seq = int(self.db.scalar(NEXT_SEQ, (session_id,)))
        self.db.execute(CHUNK_PUT, (chunk_id, *_values(
            session_id, seq, source_path, project, chunk, chunk.text, now_iso())))

    def held(self, ids: Sequence[int]) -> list[int]:
        """Of `ids`, the chunks stored, whoever's session holds them, in order."""
        d = self.db.dialect
        return [int(r[0]) for r in self.db.execute(self._sql(HELD),
                                                   (d.listed([int(i) for i in ids]),))]

    def advance_ids(self) -> None:
        """After `hippo import`: move each table's id counter past the largest id anything
        names (rows, audit, links, a memory's source), so no later insert reuses an imported
        id. (SQLite's AUTOINCREMENT follows every id inserted: nothing to move.)"""
        if self.db.dialect.advance_ids:
            self.db.execute(self.db.dialect.advance_ids)

    def ids_of_file(self, source_path: str) -> list[int]:
        """The ids of every chunk this user read from a file."""
        return [r[0] for r in self.db.execute(self._sql(CHUNKS_OF_FILE), (source_path,))]

    def ids_of_session(self, key: str) -> list[int]:
        """The ids of every chunk of the session named `key` (a team member: their own)."""
        sql = OWN_SESSION_CHUNK_IDS if self.db.team else SESSION_CHUNK_IDS
        return [r[0] for r in self.db.execute(self._sql(sql), (key,))]

    def delete(self, ids: Sequence[int], *, secure: bool = False) -> None:
        """Delete chunks and their vectors; `secure`: freed pages are zeroed (a purge; on
        PostgreSQL the old row versions are the server's to reclaim: `health.reclaim`)."""
        d = self.db.dialect
        if secure and d.secure_delete:
            self.db.execute(d.secure_delete)
        if not ids:
            return
        if d.drop_chunk_vector and self.db.has_table("echo_vec"):
            for cid in ids:
                self.db.execute(d.drop_chunk_vector, (cid,))
        self.db.execute(self._sql(DELETE_CHUNKS), (d.listed(list(ids)),))

    # -- reading (what this user may see) ------------------------------------------------
    def count(self, project: str | None = None, *, every_project: bool = False) -> int:
        """Chunks of `project` (None: of no project), or of every project."""
        if every_project:
            return int(self.db.scalar(self._sql(ALL_CHUNKS)) or 0)
        return int(self.db.scalar(self._sql(PROJECT_CHUNKS), (project,)) or 0)

    def get(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The rows of those of `ids` that exist, by id."""
        rows = self.db.rows(self._sql(CHUNKS_BY_ID), (self.db.dialect.listed(list(ids)),))
        return {r["id"]: r for r in rows}

    def neighbours(self, row: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
        """Records of the chunks up to `n` places either side of `row` in its session, in order."""
        return [to_record(r) for r in self.db.rows(self._sql(NEIGHBOURS), (
            row["session_id"], row["seq"] - n, row["seq"] + n, row["id"]))]

    def export(self) -> Iterator[dict[str, Any]]:
        """Every chunk as its exported record (`to_export`), in id order."""
        for row in self.db.rows(self._sql(EXPORT)):
            yield to_export(row)

    # -- what `hippo extract` reads ---------------------------------------------------
    def after(self, chunk_id: int) -> list[Row]:
        """id, session_id of every chunk past id `chunk_id`, in id order (a team member:
        of their own sessions)."""
        return self.db.rows(self._sql(OWN_PENDING) if self.db.team else PENDING, (chunk_id,))

    def session(self, session_id: int) -> Row | None:
        """id, session_key, project, format, started_at, parent_key of a session."""
        return self.db.row(SESSION, (session_id,))

    def session_id(self, key: str) -> int | None:
        """The id of the session named `key` this user may see (their own first; a team
        member: only their own), or None."""
        sql = SESSION_GET if self.db.team else SESSION_BY_KEY
        found = self.db.scalar(self._sql(sql), (key,))
        return None if found is None else int(found)

    def session_span(self, session_id: int) -> tuple[int | None, int | None]:
        """The first and last chunk id of a session."""
        row = self.db.row(SESSION_RANGE, (session_id,))
        return (row["first"], row["last"]) if row else (None, None)

    def segment(self, session_id: int, first: int, last: int) -> list[Row]:
        """The session's chunks with ids in [first, last], in sequence order."""
        return self.db.rows(SEGMENT, (session_id, first, last))


def _values(session_id: int, seq: int, source_path: str, project: str | None, chunk: Chunk,
            text: str, stamp: str) -> tuple[Any, ...]:
    """A chunk's row in `_COLUMNS`' order."""
    import orjson

    from hippo.store.codec import content_hash

    return (session_id, seq, source_path, project, ",".join(chunk.roles), chunk.line_start,
            chunk.line_end, orjson.dumps(list(chunk.message_ids)).decode(), chunk.started_at,
            chunk.ended_at, text, content_hash(text), stamp)
