"""What is in the database and how healthy it is (`hippo stats`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hippo.layers import floor
from hippo.maintain import session_job
from hippo.vectors import store_model

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database


def _counts(db: Database, column: str, where: str = "1") -> dict[str, int]:
    # `column` and `where` are fixed by the callers below, never user input.
    return {str(k): n for k, n in db.execute(
        f"SELECT {column}, count(*) FROM memories WHERE {where} GROUP BY {column} ORDER BY {column}"
    )}


UNVERIFIED = (f"SELECT count(*) FROM memories m WHERE {floor.CURRENT} "
              f"AND {floor.UNVERIFIED}")


def _table_exists(db: Database, name: str) -> bool:
    return bool(db.scalar("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)))


def collect(db: Database) -> dict[str, Any]:
    size = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            size += os.path.getsize(f"{db.path}{suffix}")
        except OSError:
            pass
    brain_model = store_model(db, "brain")
    echo_model = store_model(db, "echo")
    vec_rows = db.scalar("SELECT count(*) FROM memories_vec") if _table_exists(
        db, "memories_vec") else 0
    echo_vec = db.scalar("SELECT count(*) FROM echo_vec") if _table_exists(db, "echo_vec") else 0
    runs = db.rows(
        "SELECT job, id AS run_id, started_at, finished_at, outcome FROM runs r "
        "WHERE started_at = (SELECT max(started_at) FROM runs WHERE job = r.job) ORDER BY job"
    )
    return {
        "database": str(db.path),
        "size_bytes": size,
        "schema": [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")],
        "brain": {
            "memories": db.scalar("SELECT count(*) FROM memories"),
            "active": db.scalar("SELECT count(*) FROM memories WHERE status = 'active'"),
            "vectors": vec_rows,
            "by_status": _counts(db, "status"),
            "by_type": _counts(db, "type", "status = 'active'"),
            "by_tier": _counts(db, "tier", "status = 'active'"),
            "by_author": _counts(db, "author", "status = 'active'"),
            # Machine-written rules/preferences no layer loads until a person reviews them.
            "unverified": db.scalar(UNVERIFIED),
            "by_project": {("(global)" if k == "None" else k): v
                           for k, v in _counts(db, "project", "status = 'active'").items()},
            "embed_model": brain_model[0] if brain_model else None,
            "embed_dim": brain_model[1] if brain_model else None,
        },
        "echo": {
            "sessions": db.scalar("SELECT count(*) FROM echo_sessions"),
            "chunks": db.scalar("SELECT count(*) FROM echo_chunks"),
            "vectors": echo_vec,
            "files": db.scalar("SELECT count(*) FROM watermarks"),
            "embed_model": echo_model[0] if echo_model else None,
            "embed_dim": echo_model[1] if echo_model else None,
        },
        "embed_cache": {
            "entries": db.scalar("SELECT count(*) FROM embed_cache"),
            **{name.split(".", 1)[1]: value for name, value in db.execute(
                "SELECT name, value FROM counters WHERE name LIKE 'embed.%' ORDER BY name")},
        },
        "counters": {n: v for n, v in db.execute(
            "SELECT name, value FROM counters WHERE name NOT LIKE 'embed.%' ORDER BY name")},
        "jobs": {r.pop("job"): r for r in runs},
        "extract": {"last_chunk_id": int(db.scalar(
            "SELECT value FROM meta WHERE key = 'extract.last_chunk_id'") or 0),
            "chunks_pending": db.scalar(
            "SELECT count(*) FROM echo_chunks WHERE id > coalesce((SELECT CAST(value AS INTEGER) "
            "FROM meta WHERE key = 'extract.last_chunk_id'), 0)")},
        "guard": db.rows("SELECT provider, day, calls, tokens, consecutive_failures, "
                         "open_until, last_error FROM guard ORDER BY provider"),
        # Background jobs started by session-end hooks (their record lives outside the
        # database: a job that could not open it is reported too).
        "session_jobs": session_job.summary(os.path.abspath(db.path)),
    }
