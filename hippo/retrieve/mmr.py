"""Maximal marginal relevance (pipeline step 5): keep the best version of a repeated fact.

Each step picks argmax of λ·relevance − (1−λ)·(max cosine to what is already picked),
so a near-duplicate of a selected memory must be much more relevant to get in.
A candidate without a vector (a lexical-only hit) has similarity 0 to everything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    nonzero = norms > 0
    mat[nonzero] /= norms[nonzero, None]
    return mat


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
    import numpy as np

    n = len(ids)
    if not 0.0 <= lam <= 1.0:
        raise ValueError("mmr lambda must be between 0 and 1")
    if len(set(ids)) != n:
        raise ValueError("mmr ids must be unique")
    missing = [i for i in ids if i not in relevance]
    if missing:
        raise ValueError(f"no relevance for ids {missing[:5]}")
    if not all(math.isfinite(relevance[i]) for i in ids):
        raise ValueError("relevance scores must be finite")
    mat = _unit_rows(vectors, n, mask)
    if k <= 0 or n == 0:
        return []

    # Work in id order so that argmax (first maximum) breaks ties by smallest id.
    order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
    id_sorted = [ids[i] for i in order]
    rel = np.array([relevance[i] for i in id_sorted], dtype=np.float64)
    mat = mat[order]

    available = np.ones(n, dtype=bool)
    max_sim = np.zeros(n)
    picked: list[tuple[int, float]] = []
    for step in range(min(k, n)):
        scores = np.where(available, lam * rel - (1.0 - lam) * max_sim, -np.inf)
        # The first pick is the most relevant one even when λ = 0 makes every score 0.
        j = int(np.argmax(rel if step == 0 else scores))
        picked.append((int(id_sorted[j]), float(scores[j])))
        available[j] = False
        sims = mat @ mat[j]
        max_sim = sims if step == 0 else np.maximum(max_sim, sims)
    return picked
