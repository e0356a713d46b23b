"""What is in the database and how healthy it is (`hippo stats`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hippo.embed.cache import store_model
from hippo.maintain import session_job
from hippo.memory import conflicts

if TYPE_CHECKING:
    from hippo.store import Store


def collect(db: Store) -> dict[str, Any]:
    size = db.health.size_bytes()
    brain_model = store_model(db, "brain")
    echo_model = store_model(db, "echo")
    stats = db.stats
    vec_rows = stats.vector_count("brain")
    echo_vec = stats.vector_count("echo")
    runs = stats.latest_runs()
    last_chunk = int(db.meta.get("extract.last_chunk_id") or 0)
    return {
        "database": db.label,
        "size_bytes": size,
        "schema": stats.schema_steps(),
        "brain": {
            "memories": stats.memory_count(),
            "active": stats.memory_count(active=True),
            "vectors": vec_rows,
            "by_status": stats.memories_by("status", active=False),
            "by_type": stats.memories_by("type", active=True),
            "by_tier": stats.memories_by("tier", active=True),
            "by_author": stats.memories_by("author", active=True),
            # Machine-written rules/preferences no layer loads until a person reviews them.
            "unverified": stats.unverified(),
            # Machine memories that contradict a person's, waiting for a person to settle.
            "conflicts": conflicts.count(db),
            "by_project": {("(global)" if k == "None" else k): v
                           for k, v in stats.memories_by("project", active=True).items()},
            "embed_model": brain_model[0] if brain_model else None,
            "embed_dim": brain_model[1] if brain_model else None,
        },
        "echo": {
            "sessions": stats.session_count(),
            "chunks": db.chunks.count(every_project=True),
            "vectors": echo_vec,
            "files": stats.file_count(),
            "embed_model": echo_model[0] if echo_model else None,
            "embed_dim": echo_model[1] if echo_model else None,
        },
        "embed_cache": {
            "entries": stats.cache_entries(),
            **{name.split(".", 1)[1]: value for name, value in stats.counters(embed=True)},
        },
        "counters": dict(stats.counters(embed=False)),
        "jobs": {r.pop("job"): r for r in runs},
        "extract": {"last_chunk_id": last_chunk,
                    "chunks_pending": stats.chunks_pending(last_chunk)},
        "guard": stats.spend(),
        # Background jobs started by session-end hooks (their record lives outside the
        # database: a job that could not open it is reported too).
        "session_jobs": session_job.summary(
            db.label if db.path is None else os.path.abspath(db.path)),
    }
