"""Transitional (issue 23): the Echo store is `store.chunks` (`hippo.store.chunks`). These
names remain only for importers not yet moved (retrieve/echo.py, bench/);
each delegates. Remove this module once they call `db.chunks` directly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.chunks import to_record

if TYPE_CHECKING:
    import numpy as np

    from hippo.ingest.chunk import Chunk
    from hippo.store import Store

__all__ = ["add_chunks", "chunks", "delete_file_chunks", "neighbours", "session_id",
           "to_record", "touch_session"]


def session_id(db: Store, key: str, *, fmt: str, source_path: str, project: str | None,
               cwd: str | None, parent_key: str | None, agent: str | None,
               started_at: str | None) -> int:
    return db.chunks.add_session(key, fmt=fmt, source_path=source_path, project=project,
                                 cwd=cwd, parent_key=parent_key, agent=agent,
                                 started_at=started_at)


def touch_session(db: Store, sid: int, *, messages: int, ended_at: str | None,
                  started_at: str | None, cwd: str | None, project: str | None,
                  agent: str | None, parent_key: str | None) -> None:
    db.chunks.update_session(sid, messages=messages, ended_at=ended_at, started_at=started_at,
                             cwd=cwd, project=project, agent=agent, parent_key=parent_key)


def add_chunks(db: Store, sid: int, chunks: Sequence[Chunk], texts: Sequence[str],
               vectors: np.ndarray | None, *, source_path: str, project: str | None) -> list[int]:
    return db.chunks.add(sid, chunks, texts, vectors, source_path=source_path, project=project)


def delete_file_chunks(db: Store, source_path: str) -> int:
    from hippo.ingest.forget import drop_file

    return drop_file(db, source_path)


def chunks(db: Store, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    return db.chunks.get(ids)


def neighbours(db: Store, row: dict[str, Any], n: int) -> list[dict[str, Any]]:
    return db.chunks.neighbours(row, n)
