"""PostgreSQL: Echo's sessions and chunks (`echo_sessions`, `echo_chunks`, their vectors in
`echo_vec`; full text is the chunks' generated `tsv` column).

A session belongs to the user who ingested it (`owner`). Ingest's own reads and writes
(find, add, the chunks of a re-read file) are always that user's; every other read (get,
neighbours, count, export, a forgotten session's chunks) sees what `VISIBLE` allows: the
user's own sessions, or everyone's once the team turned sharing on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.chunks import to_export, to_record
from hippo.store.postgres.filters import OWN, VISIBLE

if TYPE_CHECKING:
    import numpy as np

    from hippo.ingest.chunk import Chunk
    from hippo.store.postgres.database import PgSql

SESSION_GET = f"SELECT id, messages FROM echo_sessions e WHERE session_key = ? AND {OWN}"
SESSION_INSERT = (
    "INSERT INTO echo_sessions(session_key, format, source_path, project, cwd, parent_key, "
    "agent, started_at, ended_at, messages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) "
    "RETURNING id"
)
SESSION_UPDATE = (
    "UPDATE echo_sessions SET messages = messages + ?, ended_at = coalesce(?, ended_at), "
    "started_at = coalesce(started_at, ?), cwd = coalesce(cwd, ?), "
    "project = coalesce(project, ?), agent = coalesce(agent, ?), "
    "parent_key = coalesce(parent_key, ?) WHERE id = ?"
)
SESSION_DELETE = f"DELETE FROM echo_sessions e WHERE session_key = ? AND {VISIBLE}"
SESSION_MESSAGES = "SELECT message_ids, text FROM echo_chunks WHERE session_id = ? ORDER BY seq"
NEXT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM echo_chunks WHERE session_id = ?"
CHUNK_INSERT = (
    "INSERT INTO echo_chunks(session_id, seq, source_path, project, roles, line_start, line_end, "
    "message_ids, started_at, ended_at, text, content_hash, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
)
VEC_INSERT = "INSERT INTO echo_vec(chunk_id, embedding) VALUES (?, ?)"
CHUNKS_OF_FILE = (
    f"SELECT c.id FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    f"WHERE c.source_path = ? AND {OWN} ORDER BY c.id"
)
# The vectors go with their chunks (`echo_vec` references them ON DELETE CASCADE).
DELETE_CHUNKS = "DELETE FROM echo_chunks WHERE id = ANY(?)"
# The one column list: a row of it is a record's fields (`hippo.store.chunks.RECORD_FIELDS`)
# plus `session_id`.
CHUNK_COLUMNS = (
    "c.id, e.session_key AS session, e.format, c.project, c.source_path, c.roles, c.line_start, "
    "c.line_end, c.message_ids, c.started_at, c.ended_at, c.seq, c.session_id, c.text"
)
FROM = "FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id"
PROJECT_CHUNKS = f"SELECT count(*) {FROM} WHERE c.project IS NOT DISTINCT FROM ? AND {VISIBLE}"
ALL_CHUNKS = f"SELECT count(*) {FROM} WHERE {VISIBLE}"
CHUNKS_BY_ID = f"SELECT {CHUNK_COLUMNS} {FROM} WHERE c.id = ANY(?) AND {VISIBLE}"
NEIGHBOURS = (
    f"SELECT {CHUNK_COLUMNS} {FROM} WHERE c.session_id = ? AND c.seq BETWEEN ? AND ? "
    f"AND c.id != ? AND {VISIBLE} ORDER BY c.seq"
)
SESSION_CHUNK_IDS = f"SELECT c.id {FROM} WHERE e.session_key = ? AND {VISIBLE} ORDER BY c.id"
OWN_SESSION_CHUNK_IDS = f"SELECT c.id {FROM} WHERE e.session_key = ? AND {OWN} ORDER BY c.id"
EXPORT = f"SELECT {CHUNK_COLUMNS} {FROM} WHERE {VISIBLE} ORDER BY c.id"


class PgChunks:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    # -- sessions (the user's own: what their ingest writes) ---------------------------
    def find_session(self, key: str) -> int | None:
        row = self.db.row(SESSION_GET, (key,))
        return int(row["id"]) if row else None

    def add_session(self, key: str, *, fmt: str, source_path: str, project: str | None,
                    cwd: str | None, parent_key: str | None, agent: str | None,
                    started_at: str | None) -> int:
        found = self.find_session(key)
        if found is not None:
            return found
        return int(self.db.scalar(SESSION_INSERT, (key, fmt, source_path, project, cwd,
                                                   parent_key, agent, started_at, started_at)))

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

        from hippo.store.postgres.vector import Vec
        from hippo.timeutil import now_iso
        from hippo.vectors import content_hash, to_blob

        db = self.db
        seq = int(db.scalar(NEXT_SEQ, (session_id,)))
        stamp = now_iso()
        ids = []
        for i, (chunk, text) in enumerate(zip(chunks, texts)):
            cid = int(db.scalar(CHUNK_INSERT, (
                session_id, seq + i, source_path, project, ",".join(chunk.roles),
                chunk.line_start, chunk.line_end, orjson.dumps(chunk.message_ids).decode(),
                chunk.started_at, chunk.ended_at, text, content_hash(text), stamp,
            )))
            ids.append(cid)
            if vectors is not None:
                db.execute(VEC_INSERT, (cid, Vec(to_blob(vectors[i]))))
        return ids

    def ids_of_file(self, source_path: str) -> list[int]:
        return [r[0] for r in self.db.execute(CHUNKS_OF_FILE, (source_path,))]

    def ids_of_session(self, key: str) -> list[int]:
        which = OWN_SESSION_CHUNK_IDS if self.db.team else SESSION_CHUNK_IDS  # team: one's own
        return [r[0] for r in self.db.execute(which, (key,))]

    def delete(self, ids: Sequence[int], *, secure: bool = False) -> None:
        # `secure`: nothing to zero here; the old row versions are the server's to reclaim
        # (VACUUM, `health.reclaim`, which a purge runs).
        if ids:
            self.db.execute(DELETE_CHUNKS, (list(ids),))

    def compact_index(self) -> None:
        """Nothing to do: the GIN index drops a deleted row's entries with the row."""

    # -- reading (what this user may see) ------------------------------------------------
    def count(self, project: str | None = None, *, every_project: bool = False) -> int:
        if every_project:
            return int(self.db.scalar(ALL_CHUNKS) or 0)
        return int(self.db.scalar(PROJECT_CHUNKS, (project,)) or 0)

    def get(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        rows = self.db.rows(CHUNKS_BY_ID, (list(ids),))
        return {r["id"]: r for r in rows}

    def neighbours(self, row: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
        return [to_record(r) for r in self.db.rows(
            NEIGHBOURS, (row["session_id"], row["seq"] - n, row["seq"] + n, row["id"]))]

    def export(self) -> Iterator[dict[str, Any]]:
        for row in self.db.rows(EXPORT):
            yield to_export(row)
