"""How far each transcript file was read: byte offset, lines, and a fingerprint of its head.

A file whose head no longer matches (replaced) or that shrank (truncated) is re-read from
the start after its old chunks are removed, so nothing is lost or duplicated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

HEAD = 4096
ALL = "SELECT path, offset, line, head_hash, size, mtime, format, session_id, complete FROM watermarks"
UPSERT = (
    "INSERT INTO watermarks(path, offset, line, head_hash, size, mtime, format, session_id, "
    "complete, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
    "offset = excluded.offset, line = excluded.line, head_hash = excluded.head_hash, "
    "size = excluded.size, mtime = excluded.mtime, format = excluded.format, "
    "session_id = excluded.session_id, complete = excluded.complete, "
    "updated_at = excluded.updated_at"
)


@dataclass(slots=True)
class Watermark:
    path: str
    offset: int
    line: int
    head_hash: str | None
    size: int | None
    mtime: float | None
    format: str | None
    session_id: int | None
    complete: bool


def load_all(db: Database) -> dict[str, Watermark]:
    return {r[0]: Watermark(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
            for r in db.execute(ALL)}


def head_hash(path: Path, length: int) -> str:
    """sha256 of the first `length` bytes (at most HEAD): what was read must still be there."""
    with path.open("rb") as fh:
        data = fh.read(min(length, HEAD))
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()}"


def still_same(path: Path, wm: Watermark, size: int) -> bool:
    """True when the file still starts with what was read (it may have grown)."""
    if size < wm.offset or not wm.head_hash:
        return size >= wm.offset and not wm.head_hash
    length = int(wm.head_hash.split(":", 1)[0])
    return head_hash(path, length) == wm.head_hash


def save(db: Database, path: str, *, offset: int, line: int, head: str | None, size: int,
         mtime: float, fmt: str, session_id: int | None, complete: bool) -> None:
    db.execute(UPSERT, (path, offset, line, head, size, mtime, fmt, session_id, int(complete),
                        now_iso()))
