"""How far each transcript file was read: byte offset, lines, and a fingerprint of its head
(stored by `store.watermarks`).

A file whose head no longer matches (replaced) or that shrank (truncated) is re-read from
the start after its old chunks are removed, so nothing is lost or duplicated.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.watermarks import Watermark

HEAD = 4096


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
