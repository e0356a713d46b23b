"""Maximal marginal relevance (pipeline step 5): keep the best version of a repeated fact.

Each step picks argmax of λ·relevance − (1−λ)·(max cosine to what is already picked),
so a near-duplicate of a selected memory must be much more relevant to get in.
A candidate without a vector (a lexical-only hit) has similarity 0 to everything.
`mmr` takes vectors (numpy); `select` takes a similarity function, so the search
pipeline can let SQLite compute the cosines and skip importing numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def _unit_rows(
    vectors: NDArray[np.floating] | Sequence[Sequence[float] | None] | None,
    n: int,
    mask: Sequence[bool] | None,
) -> NDArray[np.float64]:
    """An n×d float64 matrix of unit rows; rows without a usable vector are all zero."""
    import numpy as np

    if vectors is None:
        return np.zeros((n, 1))
    if isinstance(vectors, np.ndarray):
        if vectors.ndim != 2 or vectors.shape[0] != n:
            raise ValueError(f"vectors must be an array of shape ({n}, d)")
        mat = vectors.astype(np.float64, copy=True)
    else:
        if len(vectors) != n:
            raise ValueError(f"vectors must have one row per id ({n}), got {len(vectors)}")
        dims = {len(v) for v in vectors if v is not None}
        if len(dims) > 1:
            raise ValueError("all vectors must have the same dimension")
        mat = np.zeros((n, dims.pop() if dims else 1))
        for i, v in enumerate(vectors):
            if v is not None:
                mat[i] = np.asarray(v, dtype=np.float64)
    if mask is not None:
        if len(mask) != n:
            raise ValueError(f"mask must have one entry per id ({n}), got {len(mask)}")
        mat[~np.asarray(mask, dtype=bool)] = 0.0
    mat[~np.isfinite(mat).all(axis=1)] = 0.0
    norms = np.linalg.norm(mat, axis=1)
    # A row too small to normalise exactly (denormal floats) counts as no vector at all.
    nonzero = norms > 1e-12
    mat[~nonzero] = 0.0
    mat[nonzero] /= norms[nonzero, None]
    return mat


def _check(ids: Sequence[int], relevance: Mapping[int, float], lam: float) -> None:
    if not 0.0 <= lam <= 1.0:
        raise ValueError("mmr lambda must be between 0 and 1")
    if len(set(ids)) != len(ids):
        raise ValueError("mmr ids must be unique")
    missing = [i for i in ids if i not in relevance]
    if missing:
        raise ValueError(f"no relevance for ids {missing[:5]}")
    if not all(math.isfinite(relevance[i]) for i in ids):
        raise ValueError("relevance scores must be finite")


def select(
    ids: Sequence[int],
    relevance: Mapping[int, float],
    similarity: Callable[[int, int], float],
    k: int = 10,
    lam: float = 0.65,
) -> list[tuple[int, float]]:
    """MMR over a similarity function (pure Python, for a few dozen candidates).

    `similarity(a, b)` is the cosine of two ids (0 when either has no vector); it is
    asked only for pairs of distinct ids. Same result and tie rules as `mmr`.
    """
    _check(ids, relevance, lam)
    if k <= 0 or not ids:
        return []
    # Work in id order so that the first maximum breaks ties by smallest id.
    pool = sorted(ids)
    max_sim = dict.fromkeys(pool, 0.0)
    picked: list[tuple[int, float]] = []
    for step in range(min(k, len(pool))):
        best, best_score, best_key = pool[0], -math.inf, -math.inf
        for i in pool:
            score = lam * relevance[i] - (1.0 - lam) * max_sim[i]
            # The first pick is the most relevant one even when λ = 0 makes every score 0.
            key = relevance[i] if step == 0 else score
            if key > best_key:
                best, best_score, best_key = i, score, key
        picked.append((best, best_score))
        pool.remove(best)
        for i in pool:
            max_sim[i] = max(max_sim[i], similarity(i, best)) if step else similarity(i, best)
    return picked


def redundancy_penalty(relevance: float, similarities: Sequence[float], lam: float,
                       weight: float) -> tuple[float, float]:
    """A pick's highest similarity to the better picks, and the penalty it takes off the
    relevance that is scored: `weight`·(1−λ)/λ of that similarity, at most the relevance
    itself (never below 0, never a raise)."""
    factor = weight * (1.0 - lam) / lam if lam > 0 else 0.0
    most = max(similarities, default=0.0)
    return most, min(relevance, factor * max(most, 0.0))


def mmr(
    ids: Sequence[int],
    relevance: Mapping[int, float],
    vectors: NDArray[np.floating] | Sequence[Sequence[float] | None] | None,
    k: int = 10,
    lam: float = 0.65,
    *,
    mask: Sequence[bool] | None = None,
) -> list[tuple[int, float]]:
    """Select up to `k` ids by MMR; returns (id, MMR score when selected), in selection order.

    `vectors` row i belongs to `ids[i]` (an n×d array, or a list with None for missing
    vectors, or None for no vectors at all); `mask[i]` False also marks a missing vector.
    Rows are L2-normalised here, so cosine is a dot product. Ties go to the smallest id.
    The first pick is the most relevant id; its score is λ·relevance (similarity 0).
    """
    _check(ids, relevance, lam)
    mat = _unit_rows(vectors, len(ids), mask)
    if k <= 0 or not ids:
        return []
    sims = (mat @ mat.T).tolist()
    row = {item: n for n, item in enumerate(ids)}
    return select(ids, relevance, lambda a, b: sims[row[a]][row[b]], k, lam)
