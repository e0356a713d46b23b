"""The Echo store: original transcript chunks by session. Its SQL as named constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.timeutil import epoch, now_iso
from hippo.vectors import content_hash, to_blob

if TYPE_CHECKING:
    import numpy as np

    from hippo.ingest.chunk import Chunk
    from hippo.store.sqlite.database import Database

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
CHUNK_COLUMNS = (
    "c.id, e.session_key AS session, e.format, c.project, c.source_path, c.roles, c.line_start, "
    "c.line_end, c.message_ids, c.started_at, c.ended_at, c.seq, c.session_id, c.text"
)
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


def session_id(db: Database, key: str, *, fmt: str, source_path: str, project: str | None,
               cwd: str | None, parent_key: str | None, agent: str | None,
               started_at: str | None) -> int:
    """The row id of a session, created on first sight."""
    row = db.row(SESSION_GET, (key,))
    if row:
        return int(row["id"])
    db.execute(SESSION_INSERT, (key, fmt, source_path, project, cwd, parent_key, agent,
                                started_at, started_at))
    return int(db.conn.last_insert_rowid())


def touch_session(db: Database, sid: int, *, messages: int, ended_at: str | None,
                  started_at: str | None, cwd: str | None, project: str | None,
                  agent: str | None, parent_key: str | None) -> None:
    db.execute(SESSION_UPDATE, (messages, ended_at, started_at, cwd, project, agent, parent_key,
                                sid))


def add_chunks(db: Database, sid: int, chunks: Sequence[Chunk], texts: Sequence[str],
               vectors: np.ndarray | None, *, source_path: str, project: str | None) -> list[int]:
    """Append chunks (with vectors) to a session, continuing its sequence numbers."""
    import orjson

    seq = int(db.scalar(NEXT_SEQ, (sid,)))
    stamp = now_iso()
    ids = []
    for i, (chunk, text) in enumerate(zip(chunks, texts)):
        db.execute(CHUNK_INSERT, (
            sid, seq + i, source_path, project, ",".join(chunk.roles), chunk.line_start,
            chunk.line_end, orjson.dumps(chunk.message_ids).decode(), chunk.started_at,
            chunk.ended_at, text, content_hash(text), stamp,
        ))
        cid = int(db.conn.last_insert_rowid())
        ids.append(cid)
        if vectors is not None:
            db.execute(VEC_INSERT, (cid, to_blob(vectors[i]), project or "", sid,
                                    epoch(chunk.started_at)))
    return ids


def delete_file_chunks(db: Database, source_path: str) -> int:
    """Remove every chunk read from a file (it was replaced or truncated and is re-read);
    memories citing them lose those links (their re-read chunks get new ids), and the cache
    rows of texts no longer stored go."""
    from hippo import brain

    ids = [r[0] for r in db.execute(CHUNKS_OF_FILE, (source_path,))]
    texts = _texts(db, ids)
    brain.detach_chunks(db, ids, actor="ingest")
    has_vec = bool(db.scalar("SELECT 1 FROM sqlite_master WHERE name = 'echo_vec'"))
    for cid in ids:
        if has_vec:
            db.execute(DELETE_CHUNK_VEC, (cid,))
        db.execute(DELETE_CHUNK, (cid,))
    brain.drop_cached(db, texts)
    return len(ids)


def _texts(db: Database, ids: Sequence[int]) -> list[str]:
    return [r["text"] for r in chunks(db, ids).values()] if ids else []


def forget_session(db: Database, key: str, *, cited: list[int] | None = None) -> int:
    """Purge a session's chunks, vectors, FTS rows and cache rows (sentence vectors and
    token matrices of texts no longer stored); freed pages are zeroed, and the caller
    checkpoints the WAL after committing (docs/privacy.md). Memories extracted from it
    stay, their links to it removed and `source.forgotten` naming it
    (docs/reliability.md); their ids are appended to `cited` when given."""
    from hippo import brain

    ids = [r[0] for r in db.execute(SESSION_CHUNK_IDS, (key,))]
    texts = _texts(db, ids)
    touched = brain.detach_chunks(db, ids, forgotten_session=key)
    if cited is not None:
        cited.extend(touched)
    db.execute("PRAGMA secure_delete = ON")
    has_vec = bool(db.scalar("SELECT 1 FROM sqlite_master WHERE name = 'echo_vec'"))
    for cid in ids:
        if has_vec:
            db.execute(DELETE_CHUNK_VEC, (cid,))
        db.execute(DELETE_CHUNK, (cid,))
    db.execute("DELETE FROM echo_sessions WHERE session_key = ?", (key,))
    brain.drop_cached(db, texts)
    db.execute("INSERT INTO echo_fts(echo_fts) VALUES ('optimize')")
    return len(ids)


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    import orjson

    return {
        "id": row["id"], "session": row["session"], "format": row["format"],
        "project": row["project"], "source_path": row["source_path"],
        "roles": row["roles"].split(",") if row["roles"] else [],
        "line_start": row["line_start"], "line_end": row["line_end"],
        "message_ids": orjson.loads(row["message_ids"]) if row["message_ids"] else [],
        "started_at": row["started_at"], "ended_at": row["ended_at"], "seq": row["seq"],
        "text": row["text"],
    }


def chunks(db: Database, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    import orjson

    rows = db.rows(CHUNKS_BY_ID, (orjson.dumps(list(ids)).decode(),))
    return {r["id"]: r for r in rows}


def neighbours(db: Database, row: dict[str, Any], n: int) -> list[dict[str, Any]]:
    return [to_record(r) for r in db.rows(
        NEIGHBOURS, (row["session_id"], row["seq"] - n, row["seq"] + n, row["id"]))]
