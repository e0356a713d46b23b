"""Embedding vectors of memories and chunks, and nearest-neighbour search over them.

What both backends do alike is written here once (which model made a store's vectors,
the usage counters, whether a store has vectors); each backend's index is a subclass:
sqlite-vec's vec0 tables (`hippo.store.sqlite.vectors`), pgvector's
(`hippo.store.postgres.vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from hippo.store.sql import Repository

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.filters import EchoFilters, MemoryFilter

# The stores that hold vectors: the Brain's memories, the Echo's transcript chunks.
VectorStore = Literal["brain", "echo"]
STORES: tuple[VectorStore, ...] = ("brain", "echo")
# Each store's vector table, its key, and the table of what its vectors are of.
TABLES = {"brain": ("memories_vec", "memory_id", "memories"),
          "echo": ("echo_vec", "chunk_id", "echo_chunks")}
COUNT = ("INSERT INTO counters(name, value) VALUES (?, ?) "
         "ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value")


class VecHit(NamedTuple):
    """One nearest neighbour: memory (or chunk) id and cosine distance (0 = same direction)."""

    id: int
    distance: float


class Vectors(Repository):
    """Embedding vectors of memories and chunks, and nearest-neighbour search over them.

    Vectors travel as little-endian float32 blobs (`hippo.embed.cache.to_blob`)."""

    def has(self, store: str) -> bool:
        """True once `store` has its vector table (created with its first vectors)."""
        return self.db.has_table(TABLES[store][0])

    def model(self, store: str) -> tuple[str, int] | None:
        """The embedding model id and dimensions `store`'s vectors were made with, or None."""
        from hippo.store.meta import Meta  # not `store.meta`: it would hold the store

        meta = Meta(self.db)  # two reads: a list parameter would cost a search a JSON import
        model = meta.get(f"{store}.embed_model")
        return (model, int(meta.get(f"{store}.embed_dim") or 0)) if model else None

    def create(self, store: str, model_id: str, dimensions: int, embedder: str) -> None:
        """Create `store`'s vector table for vectors of `dimensions` and record the model."""
        from hippo.store.meta import Meta

        self._create(store, dimensions)
        Meta(self.db).set_many({f"{store}.embed_model": model_id,
                                f"{store}.embed_dim": str(dimensions),
                                f"{store}.embedder": embedder})

    def _create(self, store: str, dimensions: int) -> None:
        """Create `store`'s vector table (and index) for vectors of `dimensions`."""
        raise NotImplementedError

    def knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
        """The exact `k` memories nearest to `query` that `filters` allow, nearest first."""
        raise NotImplementedError

    def knn_chunks(self, query: bytes, k: int, filters: EchoFilters) -> list[VecHit]:
        """The `k` Echo chunks nearest to `query` that `filters` allow, nearest first."""
        raise NotImplementedError

    def embeddings(self, ids: Sequence[int]) -> dict[int, bytes]:
        """Stored vectors of those memory `ids` that have one."""
        raise NotImplementedError

    def similarities(self, ids: Sequence[int]) -> dict[tuple[int, int], float]:
        """Cosine similarity of every pair (a, b), a < b, of memory `ids` that both have a vector."""
        raise NotImplementedError

    def put(self, memory_id: int, vector: np.ndarray, *, project: str, type: str, tier: str,
            created: int) -> None:
        """(Re)place a memory's vector with its filter columns (only active memories are in
        vector matching)."""
        raise NotImplementedError

    def drop(self, memory_id: int) -> None:
        """Remove the memory's vector, if any."""
        raise NotImplementedError

    def nearest(self, query: bytes, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        """The `k` memories nearest `query` (exact), of this type and project ('' for global):
        (id, distance)."""
        raise NotImplementedError

    def bump(self, name: str, by: int = 1) -> None:
        """Add `by` to the usage counter `name` (embedder calls, cache hits)."""
        if by:
            self.db.execute(COUNT, (name, by))
