"""Full-text search over memories and transcript chunks (BM25), filters as data: the query
(`Terms`), its hits, and what both backends' searches share (`Lexical`). Each ranks in its
own index: FTS5 (`hippo.store.sqlite.lexical`), tsvector (`hippo.store.postgres.lexical`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from hippo.store.clauses import chunk_where
from hippo.store.clauses import where as where_sql
from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.context import LayerScope
    from hippo.store.filters import EchoFilters, MemoryFilter

LATEST = {"brain": "SELECT max(id) FROM memories", "echo": "SELECT max(id) FROM echo_chunks"}


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

    def operator(self, all_of: str, any_of: str) -> str:
        """What joins the words in a backend's syntax: `all_of` ("and") or `any_of`."""
        return all_of if self.mode == "and" else any_of


class LexHit(NamedTuple):
    """One lexical hit: memory id and BM25 score (higher is better)."""

    id: int
    score: float


class Lexical(Repository):
    """Full-text search over memories and transcript chunks (BM25), filters as data.

    The query is `Terms` (`hippo.retrieve.ftsquery.match_terms` builds it from text).
    An index that cannot answer raises `IndexUnavailable`. A backend ranks (`_memories`,
    `_chunks`, `recall`) and says which of its errors mean the index cannot answer
    (`_broken`)."""

    def search(self, terms: Terms, k: int, filters: MemoryFilter) -> list[LexHit]:
        """The exact top `k` memories matching `terms` that `filters` allow, best first."""
        if k <= 0 or not terms.words:
            return []
        where, params = where_sql(self.db.dialect, filters)
        with self._answering():
            return self._memories(terms, k, where, params)

    def search_chunks(self, terms: Terms, k: int, filters: EchoFilters) -> list[int]:
        """Up to `k` Echo chunk ids matching `terms` that `filters` allow (of the sessions
        this user may see), best first."""
        if k <= 0 or not terms.words:
            return []
        d = self.db.dialect
        where, params = chunk_where(d, filters)
        with self._answering():
            return self._chunks(terms, k, where, params)

    def recall(self, terms: Terms, scope: LayerScope, limit: int) -> list[Row]:
        """Up to `limit` current memories of the scope (`hippo.store.context`) matching
        `terms`, best first (BM25): the context layers' lexical recall."""
        raise NotImplementedError

    def extent(self, store: str) -> int:
        """How many rows `store`'s index can hold at most (its highest id; 0 when empty)."""
        return int(self.db.scalar(LATEST[store]) or 0)

    def compact(self, store: str) -> None:
        """Compact `store`'s index, so no deleted text lingers in it (an index that drops a
        deleted row's entries with the row has nothing to do)."""

    # -- what each backend does ----------------------------------------------------------
    def _memories(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[LexHit]:
        """`search` over memories that meet `where` (its `params`)."""
        raise NotImplementedError

    def _chunks(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[int]:
        """`search_chunks` over chunks (c, of sessions e) that meet `where` (its `params`)."""
        raise NotImplementedError

    def _broken(self, exc: Exception) -> bool:
        """True when `exc` says the index cannot answer (not a server down or busy)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def _answering(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if not self._broken(exc):
                raise
            raise IndexUnavailable(str(exc)) from exc
