"""SQLite: Echo's sessions and chunks (`echo_sessions`, `echo_chunks`, their vectors in
`echo_vec`, their full-text index `echo_fts`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.chunks import to_export, to_record

if TYPE_CHECKING:
    import numpy as np

    from hippo.ingest.chunk import Chunk
    from hippo.store.sqlite.database import Sql

SESSION_GET = "SELECT id, messages FROM echo_sessions WHERE session_key = ?"
SESSION_INSERT = (
    "INSERT INTO echo_sessions(session_key, format, source_path, project, cwd, parent_key, "
    "agent, started_at, ended_at, messages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
)
SESSION_UPDATE = (
    "UPDATE echo_sessions SET messages = messages + ?, ended_at = coalesce(?, ended_at), "
    "started_at = coalesce(started_at, ?), cwd = coalesce(cwd, ?), "
    "project = coalesce(project, ?), agent = coalesce(agent, ?), "
    "parent_key = coalesce(parent_key, ?) WHERE id = ?"
)
SESSION_DELETE = "DELETE FROM echo_sessions WHERE session_key = ?"
SESSION_MESSAGES = "SELECT message_ids, text FROM echo_chunks WHERE session_id = ?"
NEXT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM echo_chunks WHERE session_id = ?"
CHUNK_INSERT = (
    "INSERT INTO echo_chunks(session_id, seq, source_path, project, roles, line_start, line_end, "
    "message_ids, started_at, ended_at, text, content_hash, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
VEC_INSERT = (
    "INSERT INTO echo_vec(chunk_id, embedding, project, session_id, started) VALUES (?, ?, ?, ?, ?)"
)
CHUNKS_OF_FILE = "SELECT id FROM echo_chunks WHERE source_path = ?"
DELETE_CHUNK = "DELETE FROM echo_chunks WHERE id = ?"
DELETE_CHUNK_VEC = "DELETE FROM echo_vec WHERE chunk_id = ?"
SECURE_DELETE = "PRAGMA secure_delete = ON"
FTS_OPTIMIZE = "INSERT INTO echo_fts(echo_fts) VALUES ('optimize')"
# The one column list: a row of it is a record's fields (`hippo.store.chunks.RECORD_FIELDS`)
# plus `session_id`.
CHUNK_COLUMNS = (
    "c.id, e.session_key AS session, e.format, c.project, c.source_path, c.roles, c.line_start, "
    "c.line_end, c.message_ids, c.started_at, c.ended_at, c.seq, c.session_id, c.text"
)
PROJECT_CHUNKS = "SELECT count(*) FROM echo_chunks WHERE project IS ?"
ALL_CHUNKS = "SELECT count(*) FROM echo_chunks"
CHUNKS_BY_ID = (
    f"SELECT {CHUNK_COLUMNS} FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "WHERE c.id IN (SELECT value FROM json_each(?))"
)
NEIGHBOURS = (
    f"SELECT {CHUNK_COLUMNS} FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "WHERE c.session_id = ? AND c.seq BETWEEN ? AND ? AND c.id != ? ORDER BY c.seq"
)
SESSION_CHUNK_IDS = (
    "SELECT c.id FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "WHERE e.session_key = ?"
)
EXPORT = (
    f"SELECT {CHUNK_COLUMNS} FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "ORDER BY c.id"
)


class SqliteChunks:
    def __init__(self, db: Sql) -> None:
        self.db = db

    # -- sessions --------------------------------------------------------------------
    def find_session(self, key: str) -> int | None:
        row = self.db.row(SESSION_GET, (key,))
        return int(row["id"]) if row else None

    def add_session(self, key: str, *, fmt: str, source_path: str, project: str | None,
                    cwd: str | None, parent_key: str | None, agent: str | None,
                    started_at: str | None) -> int:
        found = self.find_session(key)
        if found is not None:
            return found
        self.db.execute(SESSION_INSERT, (key, fmt, source_path, project, cwd, parent_key, agent,
                                         started_at, started_at))
        return self.db.last_id()

    def update_session(self, session_id: int, *, messages: int, ended_at: str | None,
                       started_at: str | None, cwd: str | None, project: str | None,
                       agent: str | None, parent_key: str | None) -> None:
        self.db.execute(SESSION_UPDATE, (messages, ended_at, started_at, cwd, project, agent,
                                         parent_key, session_id))

    def session_messages(self, session_id: int) -> list[tuple[list[str], str]]:
        import orjson

        return [(orjson.loads(ids_json), text)
                for ids_json, text in self.db.execute(SESSION_MESSAGES, (session_id,))]

    def delete_session(self, key: str) -> None:
        self.db.execute(SESSION_DELETE, (key,))

    # -- chunks ----------------------------------------------------------------------
    def add(self, session_id: int, chunks: Sequence[Chunk], texts: Sequence[str],
            vectors: np.ndarray | None, *, source_path: str, project: str | None) -> list[int]:
        import orjson

        from hippo.timeutil import epoch, now_iso
        from hippo.vectors import content_hash, to_blob

        db = self.db
        seq = int(db.scalar(NEXT_SEQ, (session_id,)))
        stamp = now_iso()
        ids = []
        for i, (chunk, text) in enumerate(zip(chunks, texts)):
            db.execute(CHUNK_INSERT, (
                session_id, seq + i, source_path, project, ",".join(chunk.roles),
                chunk.line_start, chunk.line_end, orjson.dumps(chunk.message_ids).decode(),
                chunk.started_at, chunk.ended_at, text, content_hash(text), stamp,
            ))
            cid = db.last_id()
            ids.append(cid)
            if vectors is not None:
                db.execute(VEC_INSERT, (cid, to_blob(vectors[i]), project or "", session_id,
                                        epoch(chunk.started_at)))
        return ids

    def ids_of_file(self, source_path: str) -> list[int]:
        return [r[0] for r in self.db.execute(CHUNKS_OF_FILE, (source_path,))]

    def ids_of_session(self, key: str) -> list[int]:
        return [r[0] for r in self.db.execute(SESSION_CHUNK_IDS, (key,))]

    def delete(self, ids: Sequence[int], *, secure: bool = False) -> None:
        db = self.db
        if secure:
            db.execute(SECURE_DELETE)
        has_vec = db.has_table("echo_vec")
        for cid in ids:
            if has_vec:
                db.execute(DELETE_CHUNK_VEC, (cid,))
            db.execute(DELETE_CHUNK, (cid,))

    def compact_index(self) -> None:
        self.db.execute(FTS_OPTIMIZE)

    # -- reading -----------------------------------------------------------------------
    def count(self, project: str | None = None, *, every_project: bool = False) -> int:
        if every_project:
            return int(self.db.scalar(ALL_CHUNKS) or 0)
        return int(self.db.scalar(PROJECT_CHUNKS, (project,)) or 0)

    def get(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        import orjson

        rows = self.db.rows(CHUNKS_BY_ID, (orjson.dumps(list(ids)).decode(),))
        return {r["id"]: r for r in rows}

    def neighbours(self, row: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
        return [to_record(r) for r in self.db.rows(
            NEIGHBOURS, (row["session_id"], row["seq"] - n, row["seq"] + n, row["id"]))]

    def export(self) -> Iterator[dict[str, Any]]:
        for row in self.db.rows(EXPORT):
            yield to_export(row)
