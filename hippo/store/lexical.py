"""Full-text search over memories and transcript chunks (BM25), filters as data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters


class IndexUnavailable(Exception):
    """The full-text index cannot answer this query (damaged, missing, a bad expression)."""


class Terms(NamedTuple):
    """A lexical query as data: the words to find (a phrase keeps its tokens, space-joined),
    all of them ("and") or any ("or"). Each backend spells it in its own syntax; no
    character of a user's query ever reaches an index as syntax."""

    words: tuple[str, ...]
    mode: Literal["and", "or"] = "and"

    def same_match(self, other: Terms) -> bool:
        """True when both find the same rows (one word: "and" and "or" agree)."""
        return self.words == other.words and (self.mode == other.mode or len(self.words) <= 1)


class LexHit(NamedTuple):
    """One lexical hit: memory id and BM25 score (higher is better)."""

    id: int
    score: float


class Lexical(Protocol):
    """Full-text search over memories and transcript chunks (BM25), filters as data.

    The query is `Terms` (`hippo.retrieve.ftsquery.match_terms` builds it from text).
    An index that cannot answer raises `IndexUnavailable`."""

    def search(self, terms: Terms, k: int, filters: SearchFilters) -> list[LexHit]:
        """The exact top `k` memories matching `terms` that `filters` allow, best first."""
        ...

    def search_chunks(self, terms: Terms, k: int, filters: EchoFilters) -> list[int]:
        """Up to `k` Echo chunk ids matching `terms` that `filters` allow, best first."""
        ...

    def extent(self, store: str) -> int:
        """How many rows `store`'s index can hold at most (its highest id; 0 when empty)."""
        ...
