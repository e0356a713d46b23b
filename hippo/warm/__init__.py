"""What a long-lived hippo process keeps loaded between calls: the one warm engine that both
`hippo serve` (`hippo.serve`) and `hippo mcp` (`hippo.mcp.tools`) run.

A warm process still opens the store afresh for every call (a connection costs about a
millisecond), so it sees every other process's writes, a replaced file, a migration, and
holds no text of a memory or a transcript between calls. What it keeps is what costs time
to load and holds nothing a user can erase:

- the embedders that carry no per-call state (the local model: 0.1-0.5 s to load; the
  hashing one), shared by every call whose settings name the same one;
- each SQLite store's Brain vectors (`hippo.warm.index`), scanned in memory instead of
  by sqlite-vec and brought up to date with the store's vector log before every search,
  so a vector `forget --hard` or a purge dropped is gone from memory before the next
  answer.

The process that runs calls creates its `Warm` and hands it to each call through the
call's environment (`hippo.console.environment.Environment.warm`); `Hippo` asks it for the
embedder (`embedder`) and opens the store with the file's index (`index`). No global:
a plain CLI process has none. Nothing here imports the search (`hippo.app.warmup` loads
it ahead of the first call).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.embed import Embedder

# Embedders built from nothing but their name: one instance serves every call. The others
# (an API's) read keys and endpoints from each call's settings and are built per call.
STATELESS = ("local", "hash")


class Warm:
    """The loaded embedders and the in-memory vector indexes of one warm process."""

    def __init__(self, *, vectors: bool = True, max_bytes: int = 1 << 30) -> None:
        self._embedders: dict[str, Embedder] = {}
        self._indexes: dict[str, Any] = {}  # database path → hippo.warm.index.WarmIndex
        self._lock = threading.Lock()
        self.vectors = vectors  # scan Brain vectors in memory (SQLite stores)
        self.max_bytes = max_bytes  # what one store's vectors may take; a bigger one is not held

    def embedder(self, name: str, settings: Settings | None) -> Embedder:
        """The embedder `name`, built once when it is one of the STATELESS ones."""
        from hippo import embed

        if name not in STATELESS:
            return embed.get(name, settings)
        with self._lock:
            if name not in self._embedders:
                self._embedders[name] = embed.get(name, settings)
            return self._embedders[name]

    def index(self, database: Path | str) -> Any:
        """The in-memory vector index of the SQLite file `database`, to open the store
        with (`hippo.store.connect(..., index=)`); None for a server's store (a
        `postgresql://` URL: pgvector scans its own) or when vectors are not kept."""
        if not self.vectors or isinstance(database, str):
            return None
        from hippo.warm.index import WarmIndex

        key = str(database)
        with self._lock:
            found = self._indexes.get(key)
            if found is None:
                found = self._indexes[key] = WarmIndex(Path(database), self.max_bytes)
            return found

    def report(self) -> dict[str, Any]:
        """What is held: the embedders loaded, each index's vectors and bytes."""
        with self._lock:
            indexes = dict(self._indexes)
            loaded = sorted(self._embedders)
        return {"embedders": loaded,
                "vectors": {path: index.report() for path, index in indexes.items()}}


__all__ = ["STATELESS", "Warm"]
