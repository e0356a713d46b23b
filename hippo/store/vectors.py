"""Embedding vectors of memories and chunks, and nearest-neighbour search over them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.filters import EchoFilters, SearchFilters

# The stores that hold vectors: the Brain's memories, the Echo's transcript chunks.
VectorStore = Literal["brain", "echo"]
STORES: tuple[VectorStore, ...] = ("brain", "echo")


class VecHit(NamedTuple):
    """One nearest neighbour: memory (or chunk) id and cosine distance (0 = same direction)."""

    id: int
    distance: float


class Vectors(Protocol):
    """Embedding vectors of memories and chunks, and nearest-neighbour search over them.

    Vectors travel as little-endian float32 blobs (`hippo.vectors.to_blob`)."""

    def has(self, store: str) -> bool:
        """True once `store` has its vector table (created with its first vectors)."""
        ...

    def model(self, store: str) -> tuple[str, int] | None:
        """The embedding model id and dimensions `store`'s vectors were made with, or None."""
        ...

    def create(self, store: str, model_id: str, dimensions: int, embedder: str) -> None:
        """Create `store`'s vector table for vectors of `dimensions` and record the model."""
        ...

    def knn(self, query: bytes, k: int, filters: SearchFilters) -> list[VecHit]:
        """The exact `k` memories nearest to `query` that `filters` allow, nearest first."""
        ...

    def knn_chunks(self, query: bytes, k: int, filters: EchoFilters) -> list[VecHit]:
        """The `k` Echo chunks nearest to `query` that `filters` allow, nearest first."""
        ...

    def embeddings(self, ids: Sequence[int]) -> dict[int, bytes]:
        """Stored vectors of those memory `ids` that have one."""
        ...

    def similarities(self, ids: Sequence[int]) -> dict[tuple[int, int], float]:
        """Cosine similarity of every pair (a, b), a < b, of memory `ids` that both have a vector."""
        ...

    def put(self, memory_id: int, vector: np.ndarray, *, project: str, type: str, tier: str,
            created: int) -> None:
        """(Re)place a memory's vector with its filter columns (only active memories are in
        vector matching)."""
        ...

    def drop(self, memory_id: int) -> None:
        """Remove the memory's vector, if any."""
        ...

    def nearest(self, vector: np.ndarray, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        """The `k` vectors nearest `vector` of this type and project ('' for global):
        (id, distance)."""
        ...

    def bump(self, name: str, by: int = 1) -> None:
        """Add `by` to the usage counter `name` (embedder calls, cache hits)."""
        ...
