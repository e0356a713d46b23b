"""Exact cosine KNN over the Brain's vectors (pipeline step 2, vector side).

The store (`store.vectors.knn`) returns the exact top `k` among the memories the
filters allow, nearest first; how (an index scan, point lookups along a time range, an
exact scan) is the backend's business. Vectors travel as little-endian float32 blobs;
nothing here needs numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store import Store
    from hippo.store.filters import MemoryFilter
    from hippo.store.vectors import VecHit


def has_store(db: Store) -> bool:
    """True once the Brain has a vector table (created with its first vectors)."""
    return db.vectors.has("brain")


def search(db: Store, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
    """The `k` memories nearest to `query` (float32 blob) that `filters` allow, nearest first."""
    return db.vectors.knn(query, k, filters)


def embeddings(db: Store, ids: Sequence[int]) -> dict[int, bytes]:
    """Stored vectors (float32 blobs) of those `ids` that have one."""
    return db.vectors.embeddings(ids)


def similarities(db: Store, ids: Sequence[int]) -> dict[tuple[int, int], float]:
    """Cosine similarity of every pair (a, b), a < b, of `ids` that both have a vector."""
    return db.vectors.similarities(ids)
