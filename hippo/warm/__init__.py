"""What a long-lived hippo process keeps loaded between calls: the one warm engine that both
`hippo serve` (`hippo.serve`) and `hippo mcp` (`hippo.mcp.engine`) run.

A warm process still opens the store afresh for every call (a connection costs about a
millisecond), so it sees every other process's writes, a replaced file, a migration, and
holds no text of a memory or a transcript between calls. What it keeps is what costs time
to load and holds nothing a user can erase:

- the embedders that carry no per-call state (the local model: 0.1-0.5 s to load; the
  hashing one), shared by every call whose settings name the same one;
- each SQLite store's Brain vectors (`hippo.warm.vectors`), scanned in memory instead of
  by sqlite-vec and brought up to date with the store's vector log before every search,
  so a vector `forget --hard` or a purge dropped is gone from memory before the next
  answer.

`Hippo` asks `ACTIVE` (None in a plain CLI process) for both: `embedder` and `adopt`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.embed import Embedder
    from hippo.store import Store

# Embedders built from nothing but their name: one instance serves every call. The others
# (an API's) read keys and endpoints from each call's settings and are built per call.
STATELESS = ("local", "hash")


class Warm:
    """The loaded embedders and the in-memory vector indexes of one warm process."""

    def __init__(self, *, vectors: bool = True, max_bytes: int = 1 << 30) -> None:
        self._embedders: dict[str, Embedder] = {}
        self._indexes: dict[str, Any] = {}  # database path → hippo.warm.vectors.WarmIndex
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

    def adopt(self, db: Store) -> Any:
        """Give a store just opened the process's in-memory vector index of its file (the
        index, or None: a server's store, or vectors not kept)."""
        if not self.vectors or db.path is None:
            return None
        from hippo.warm.vectors import WarmIndex

        key = str(db.path)
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = self._indexes[key] = WarmIndex(db.path, self.max_bytes)
        index.wrap(db)
        return index

    def report(self) -> dict[str, Any]:
        """What is held: the embedders loaded, each index's vectors and bytes."""
        with self._lock:
            indexes = dict(self._indexes)
            loaded = sorted(self._embedders)
        return {"embedders": loaded,
                "vectors": {path: index.report() for path, index in indexes.items()}}


ACTIVE: Warm | None = None


def activate(*, vectors: bool = True, max_bytes: int = 1 << 30) -> Warm:
    """Make this process warm (a server's start); the Warm every Hippo then uses."""
    global ACTIVE
    if ACTIVE is None:
        ACTIVE = Warm(vectors=vectors, max_bytes=max_bytes)
    return ACTIVE


def deactivate() -> None:
    global ACTIVE
    ACTIVE = None


def preload(h: Any) -> None:
    """Load what the first call would: the store's embedders, the search modules, the
    local model's session (with full graph optimisation, the right choice for a
    long-lived process: one pass makes onnxruntime allocate its buffers now), and the
    Brain's vectors when this process keeps them."""
    emb = h.embedder("brain")
    h.embedder("echo")  # shares the loaded model when it is the same one
    import hippo.retrieve.echo_search
    import hippo.retrieve.pipeline  # noqa: F401 - imported now, not by the first search

    if getattr(emb, "_session", None) is not None:
        emb.embed_batch(["warm up"])
    index = ACTIVE.adopt(h.db) if ACTIVE is not None else None
    if index is not None:
        index.sync(h.db)


__all__ = ["ACTIVE", "STATELESS", "Warm", "activate", "deactivate", "preload"]
