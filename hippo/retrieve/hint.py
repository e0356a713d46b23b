"""Query hint: a small, bounded relevance nudge for task/todo memories (pipeline step 4).

A heuristic, not an intent classifier: a query that says "task", "deadline", "next",
... lifts task and todo memories by `SearchParams.hint_boost` (at most `MAX_HINT_BOOST`).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache

from hippo.retrieve.ftsquery import tokens
from hippo.retrieve.params import DEFAULT_PARAMS, SearchParams


@lru_cache(maxsize=32)
def _words(query: str) -> frozenset[str]:
    """Lower-cased words of `query`, cached: the pipeline asks once per candidate."""
    return frozenset(t.lower() for t in tokens(query))


def query_has_hint(query: str, hint_words: Collection[str]) -> bool:
    """True when a whole word of `query` (case-insensitive) is one of `hint_words`."""
    return any(w in hint_words for w in _words(query))


def task_hint(query: str, memory_type: str, params: SearchParams = DEFAULT_PARAMS) -> float:
    """The boost for a memory of `memory_type` under `query`: `hint_boost` or 0.0."""
    if memory_type.lower() not in params.hint_types:
        return 0.0
    return params.hint_boost if query_has_hint(query, params.hint_words) else 0.0


def apply_hint(relevance: float, boost: float) -> float:
    """Relevance plus boost, clamped to [0, 1] so later stages keep their scale."""
    return min(1.0, max(0.0, relevance + boost))
