"""Removing what Echo holds: the chunks of a file that is re-read, a forgotten session.

Memories citing removed chunks stay (Brain is curated apart from Echo): their links to
them go, and the cache rows of texts no longer stored go too (`hippo.memory.brain`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store import Store


def drop_file(db: Store, source_path: str) -> int:
    """Remove every chunk read from a file (it was replaced or truncated and is re-read);
    memories citing them lose those links (their re-read chunks get new ids), and the cache
    rows of texts no longer stored go."""
    from hippo.memory import brain

    ids = db.chunks.ids_of_file(source_path)
    texts = _texts(db, ids)
    brain.detach_chunks(db, ids, actor="ingest")
    db.chunks.delete(ids)
    brain.drop_cached(db, texts)
    return len(ids)


def forget_session(db: Store, key: str, *, cited: list[int] | None = None) -> int:
    """Purge a session's chunks, vectors, FTS rows and cache rows (sentence vectors and
    token matrices of texts no longer stored); freed pages are zeroed, and the caller
    checkpoints the WAL after committing (docs/privacy.md). Memories extracted from it
    stay, their links to it removed and `source.forgotten` naming it
    (docs/reliability.md); their ids are appended to `cited` when given. A session this
    user may not see (another's, on a team store) is not found, as one that never was."""
    from hippo.errors import NotFoundError
    from hippo.memory import brain

    if db.chunks.session_id(key) is None:
        raise NotFoundError(f"no session {key!r} in Echo")
    ids = db.chunks.ids_of_session(key)
    texts = _texts(db, ids)
    touched = brain.detach_chunks(db, ids, forgotten_session=key)
    if cited is not None:
        cited.extend(touched)
    db.chunks.delete(ids, secure=True)
    db.chunks.delete_session(key)
    brain.drop_cached(db, texts)
    db.lexical.compact("echo")
    return len(ids)


def _texts(db: Store, ids: Sequence[int]) -> list[str]:
    return [r["text"] for r in db.chunks.get(ids).values()] if ids else []
