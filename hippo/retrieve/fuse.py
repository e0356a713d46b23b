"""Reciprocal rank fusion (pipeline step 3): combine retrievers by rank, not by raw score.

BM25 and cosine distance share no scale, so each retriever contributes w/(k + rank).
The normalised score divides by the best possible sum (rank 1 in every retriever
passed), which puts it in [0, 1] and makes scores comparable across queries.

Pass only the retrievers that ran: an empty list means "ran and found nothing" and
still counts in the maximum; a retriever that is down (FTS unavailable) must be left
out, so the remaining one can still reach 1.0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple


class Fused(NamedTuple):
    """One fused candidate: normalised score, raw RRF sum, 1-based rank per retriever."""

    id: int
    score: float
    raw: float
    ranks: Mapping[str, int]


def _weights(
    rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float] | None
) -> dict[str, float]:
    """Weight per retriever in `rankings` (1.0 when not given); negative is an error."""
    out = {name: 1.0 if weights is None else float(weights.get(name, 1.0)) for name in rankings}
    for name, w in out.items():
        if not (math.isfinite(w) and w >= 0):
            raise ValueError(f"weight for retriever {name!r} must be a finite number >= 0")
    return out


def _ranks(rankings: Mapping[str, Sequence[int]]) -> dict[int, dict[str, int]]:
    """Per id, its 1-based rank in each retriever that returned it (repeats are skipped)."""
    found: dict[int, dict[str, int]] = {}
    for name in sorted(rankings):
        rank = 0
        for item in rankings[name]:
            ranks = found.setdefault(item, {})
            if name not in ranks:
                rank += 1
                ranks[name] = rank
    return found


def _check_k(k: float) -> None:
    if not (math.isfinite(k) and k >= 0):
        raise ValueError("rrf k must be a finite number >= 0")


def rrf(
    rankings: Mapping[str, Sequence[int]],
    k: float = 60,
    weights: Mapping[str, float] | None = None,
) -> dict[int, float]:
    """Raw RRF: for each id, the sum over retrievers of w / (k + rank)."""
    _check_k(k)
    w = _weights(rankings, weights)
    # fsum is exact-then-rounded, so the result does not depend on retriever order.
    return {
        item: math.fsum(w[name] / (k + rank) for name, rank in ranks.items())
        for item, ranks in _ranks(rankings).items()
    }


def max_rrf(
    rankings: Mapping[str, Sequence[int]],
    k: float = 60,
    weights: Mapping[str, float] | None = None,
) -> float:
    """The largest possible raw RRF: rank 1 in every retriever of `rankings`."""
    _check_k(k)
    return math.fsum(wt / (k + 1) for wt in _weights(rankings, weights).values())


def normalised_rrf(
    rankings: Mapping[str, Sequence[int]],
    k: float = 60,
    weights: Mapping[str, float] | None = None,
) -> dict[int, float]:
    """RRF divided by `max_rrf`, so every score is in [0, 1] (in (0, 1] with positive weights)."""
    raw = rrf(rankings, k, weights)
    if not raw:
        return {}
    top = max_rrf(rankings, k, weights)
    if top <= 0:
        raise ValueError("at least one retriever weight must be positive")
    return {item: min(1.0, score / top) for item, score in raw.items()}


def fuse(
    rankings: Mapping[str, Sequence[int]],
    k: float = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """All candidates, best first (ties by smallest id), with scores and ranks for --explain."""
    raw = rrf(rankings, k, weights)
    norm = normalised_rrf(rankings, k, weights)
    ranks = _ranks(rankings)
    fused = [Fused(item, norm[item], raw[item], ranks[item]) for item in raw]
    fused.sort(key=lambda f: (-f.score, f.id))
    return fused
