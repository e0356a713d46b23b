"""Full-text search over memories and transcript chunks (BM25), filters as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters


class IndexUnavailable(Exception):
    """The full-text index cannot answer this query (damaged, missing, a bad expression)."""


@dataclass(frozen=True, slots=True)
class LexHit:
    """One lexical hit: memory id and BM25 score (higher is better)."""

    id: int
    score: float


class Lexical(Protocol):
    """Full-text search over memories and transcript chunks (BM25), filters as data.

    `expr` is a match expression of quoted terms (`hippo.retrieve.ftsquery.build_match`).
    An index that cannot answer raises `IndexUnavailable`."""

    def search(self, expr: str, k: int, filters: SearchFilters) -> list[LexHit]:
        """The exact top `k` memories matching `expr` that `filters` allow, best first."""
        ...

    def search_chunks(self, expr: str, k: int, filters: EchoFilters) -> list[int]:
        """Up to `k` Echo chunk ids matching `expr` that `filters` allow, best first."""
        ...

    def extent(self, store: str) -> int:
        """How many rows `store`'s index can hold at most (its highest id; 0 when empty)."""
        ...
