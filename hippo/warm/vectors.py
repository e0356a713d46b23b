"""The Brain's vectors of one SQLite store held in memory by a warm process, and the exact
KNN over them (SKELETON: the store's own search until this is built)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store import Store


class WarmIndex:
    """One store file's Brain vectors in memory."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes

    def wrap(self, db: Store) -> None:
        """Make `db.vectors.knn` answer from memory (brought up to date first)."""

    def sync(self, db: Store) -> None:
        """Bring the vectors in memory up to date with `db` (a full load the first time)."""

    def report(self) -> dict[str, Any]:
        return {"vectors": 0, "bytes": 0}
