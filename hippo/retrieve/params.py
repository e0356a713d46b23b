"""Every default of the Brain search pipeline, named in one place (SPEC "Brain search pipeline").

Pure data: no I/O at import. The config module feeds overrides through
`SearchParams.from_mapping`; everything downstream receives a `SearchParams`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.config import Settings

# Retriever names: the keys of the rankings handed to fusion and of `explain`.
BM25 = "bm25"
VECTOR = "vector"
# Vector candidates from inside the time windows a query names (`hippo.retrieve.late`).
DATES = "dates"

# Memory types (τ, default tier, frozen) live in `hippo.memory.memtypes`, the one table the
# whole program uses; the pipeline reads them from `Hippo.types` (with user types).
# Breaker and spend caps of the reranker live in `hippo.paid.spend` ([guard.voyage]).

# Upper bound on the query-hint boost: a nudge, never a re-ranking of the whole list.
MAX_HINT_BOOST = 0.2

# A longer query is cut to its first MAX_QUERY_CHARS characters, and the cut is reported
# as a degradation: the models read ~256 tokens anyway, and a 1 MB query (a pasted log
# reaching the prompt hook) would cost seconds of tokenising. docs/reliability.md.
MAX_QUERY_CHARS = 8_000
# From this many rows (memories, Echo chunks) the BM25 retriever runs beside the vector
# scan, in a thread on a second connection. Measured with a fresh connection per search
# (as a CLI process has), alternating: 1,755 memories 28.2 vs 28.4 ms (no difference),
# 10k 53.2 vs 55.7 ms, 100k 105-108 vs 124-133 ms (bench/bench_search.py).
PARALLEL_MIN_ROWS = 5_000

DEFAULT_HINT_WORDS: frozenset[str] = frozenset(
    {"task", "tasks", "reminder", "remind", "deadline", "due", "next", "todo", "todos"}
)
DEFAULT_HINT_TYPES: frozenset[str] = frozenset({"task", "todo"})


def _check(name: str, ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(f"search setting {name!r} {message}")


def _coerce(key: str, value: object, default: object) -> object:
    """Convert a config value to the type of the setting's default, or raise naming the key.

    Every bad setting is a ValueError (not TypeError) so the config layer maps all of
    them to one configuration error.
    """
    if isinstance(default, frozenset):
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise ValueError(f"search setting {key!r} must be a list of words")  # noqa: TRY004
        words = list(value)
        if not all(isinstance(w, str) for w in words):
            raise ValueError(f"search setting {key!r} must be a list of words")
        return frozenset(w.strip().lower() for w in words if w.strip())
    if isinstance(value, bool):
        raise ValueError(f"search setting {key!r} must be a number, not a boolean")  # noqa: TRY004
    if isinstance(default, int):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ValueError(f"search setting {key!r} must be a whole number")
    if isinstance(value, int | float):
        return float(value)
    raise ValueError(f"search setting {key!r} must be a number")


@dataclass(frozen=True, slots=True)
class SearchParams:
    """The tunable numbers of `hippo search`; defaults are the SPEC's values."""

    candidates_per_retriever: int = 30
    rrf_k: int = 60
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    # If the AND form of the FTS query finds fewer hits than this, the OR form runs too.
    fts_and_min_hits: int = 5
    hint_boost: float = 0.05
    hint_words: frozenset[str] = DEFAULT_HINT_WORDS
    hint_types: frozenset[str] = DEFAULT_HINT_TYPES
    mmr_k: int = 10
    mmr_lambda: float = 0.65
    # How much of MMR's redundancy penalty, (1−λ)/λ · max cosine to a better pick, is
    # taken off the relevance that enters the final score. 1.0: a near-copy of a picked
    # memory also scores lower, so it cannot climb back into the answer when the 10
    # picks are re-sorted by final score; 0.0: MMR only chooses which 10 are scored.
    mmr_penalty_weight: float = 1.0
    # Late interaction (`hippo.retrieve.late`): the best `late_pool` fused candidates
    # are re-scored by MaxSim over the local model's token vectors, and that score,
    # min-max scaled, becomes their relevance. 0 turns it off; embedders without token
    # vectors keep the fused score.
    late_pool: int = 90
    # Dates named in the query (`query.mentioned_dates`, widened by `date_slack_days`):
    # the vector retriever also runs inside those windows, and memories created in one
    # gain `date_boost` relevance (then rescaled into 0..1). 0 turns it off.
    date_boost: float = 0.4
    date_slack_days: float = 1.0
    # How well the query matches anything at all, from the best late-interaction score
    # of the pool (MaxSim: a weighted mean of token cosines, on the same scale for every
    # query): at `match_floor` or below the factor is 0, from `match_full` up 1, linear
    # between. A result's `score` is its final score times the factor, so scores compare
    # across queries (a query about nothing stored no longer scores 0.95) and the order
    # is untouched. With the local model, off-topic questions reach 0.16 at the median
    # and 0.24 at the 95th percentile, LoCoMo questions in their own conversation 0.35
    # at the 5th, 0.49 at the median (`bench/locomo.py`; docs/search.md). match_full = 0
    # turns it off; so does a reranked answer (its scores are on one scale already), an
    # answer holding a memory created on a date the query names, or no late interaction.
    match_floor: float = 0.2
    match_full: float = 0.4
    w_relevance: float = 0.75
    w_importance: float = 0.10
    w_freshness: float = 0.15
    result_limit: int = 5
    # The reranker sees this many of the MMR selection (at least the answer's size).
    rerank_pool: int = 10
    rerank_timeout_ms: int = 800

    def __post_init__(self) -> None:
        for name in (
            "candidates_per_retriever",
            "mmr_k",
            "result_limit",
            "rerank_pool",
            "rerank_timeout_ms",
        ):
            _check(name, getattr(self, name) >= 1, "must be at least 1")
        for name in ("rrf_k", "fts_and_min_hits", "late_pool"):
            _check(name, getattr(self, name) >= 0, "must be 0 or more")
        for name in ("bm25_weight", "vector_weight", "w_relevance", "w_importance", "w_freshness"):
            value = getattr(self, name)
            _check(name, math.isfinite(value) and value >= 0, "must be a finite number >= 0")
        _check(
            "bm25_weight",
            self.bm25_weight + self.vector_weight > 0,
            "bm25_weight and vector_weight cannot both be 0",
        )
        _check("mmr_lambda", 0.0 <= self.mmr_lambda <= 1.0, "must be between 0 and 1")
        _check("date_boost", 0.0 <= self.date_boost <= 1.0, "must be between 0 and 1")
        _check("date_slack_days", math.isfinite(self.date_slack_days)
               and self.date_slack_days >= 0, "must be a finite number >= 0")
        _check("mmr_penalty_weight", 0.0 <= self.mmr_penalty_weight <= 1.0,
               "must be between 0 and 1")
        _check("match_floor", 0.0 <= self.match_floor <= 1.0, "must be between 0 and 1")
        _check("match_full", self.match_full == 0.0
               or self.match_floor < self.match_full <= 1.0,
               "must be 0 (off) or above match_floor and at most 1")
        _check(
            "hint_boost",
            0.0 <= self.hint_boost <= MAX_HINT_BOOST,
            f"must be between 0 and {MAX_HINT_BOOST}",
        )

    @property
    def retriever_weights(self) -> dict[str, float]:
        """Fusion weights keyed by retriever name (`BM25`, `VECTOR`)."""
        return {BM25: self.bm25_weight, VECTOR: self.vector_weight}

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, object]) -> SearchParams:
        """Defaults with `overrides` applied; an unknown key or a wrong type is a ValueError."""
        defaults = cls()
        known = {f.name for f in dataclasses.fields(cls)}
        changes: dict[str, object] = {}
        for key, value in overrides.items():
            if key not in known:
                raise ValueError(
                    f"unknown search setting {key!r}; known settings: {', '.join(sorted(known))}"
                )
            changes[key] = _coerce(key, value, getattr(defaults, key))
        return dataclasses.replace(defaults, **changes)  # type: ignore[arg-type]


DEFAULT_PARAMS = SearchParams()


def load_params(settings: Settings) -> SearchParams:
    """`SearchParams` with the config file's [search] table applied (bad value → exit 78)."""
    from hippo.errors import ConfigError

    try:
        return SearchParams.from_mapping(settings.table("search"))
    except ValueError as exc:
        raise ConfigError(f"{exc} (in [search] of {settings.file})") from None
