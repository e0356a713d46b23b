"""Late interaction (MaxSim) over the local model's token vectors (docs/quality.md).

A pooled sentence vector blurs a question into one point; scoring each query token
against its best matching token of a candidate (ColBERT-style MaxSim, here with the
unchanged MiniLM's contextual token states) keeps every content word of the query in
play, softly (`painted` ~ `painting`, `sunrise` ~ `sunset`). Query tokens are weighted by
an IDF computed over the candidate pool itself, so words every candidate shares (the
project's or person's name, `the`) count little, and the score needs no corpus
statistics. It reranks the fused candidate pool only, so its cost is bounded by the pool.
Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import math
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from hippo.retrieve.tokenmatrix import TokenMatrix

def pool_idf(query: TokenMatrix, docs: Sequence[TokenMatrix]) -> list[float]:
    """IDF of each query token over the candidate pool: log((P+1)/(df+0.5)), always > 0."""
    df: Counter[int] = Counter()
    for d in docs:
        df.update(set(d.ids))
    p = len(docs)
    return [math.log((p + 1) / (df.get(t, 0) + 0.5)) for t in query.ids]


def _terms(m: TokenMatrix) -> tuple[list[tuple[int, int, int]], list[float]]:
    """Per token (pos, neg, nonzero mask), and per token 1/sqrt(nonzero count)."""
    bits = [(p, n, p | n) for p, n in zip(m.pos, m.neg)]
    inv = [1.0 / math.sqrt(c) if (c := z.bit_count()) else 0.0 for _, _, z in bits]
    return bits, inv


# From this many (query token, document token) pairs MaxSim runs in numpy, and whenever
# numpy is loaded already (a new query ran the model; a warm worker): pure Python takes
# ~0.5 µs a pair, importing numpy ~150 ms. A Brain pool (90 memories of ~16 tokens, a
# 9-token query) is ~13k pairs, ~9 ms in Python; an Echo pool of ~270 transcript chunks
# of ~180 tokens ~500k pairs, ~255 ms in Python.
NUMPY_MIN_PAIRS = 300_000


def late_scores(query: TokenMatrix, docs: Sequence[TokenMatrix]) -> list[float]:
    """MaxSim per doc: the pool-IDF-weighted mean over the query's content tokens (no
    punctuation) of the best cosine to any token of the doc.

    Cosines are those of the ternary token vectors: (agreeing − disagreeing nonzero
    components) / sqrt(nonzeros of one · nonzeros of the other). Every token keeps the
    same number of components (`TERNARY_SHARE`), so the integer agreement is maximised
    first and scaled once, unless ties made a doc's counts differ. Big pools, or any pool
    once numpy is loaded, are scored by `_late_scores_numpy`: the same arithmetic, the
    same floats.
    """
    if not docs:
        return []
    query = query.content()
    if not query.ids:
        return [0.0] * len(docs)
    w = pool_idf(query, docs)
    total = sum(w) or 1.0
    pairs = len(query.ids) * sum(len(d.ids) for d in docs)
    if ("numpy" in sys.modules or pairs >= NUMPY_MIN_PAIRS) and _bitwise_count() is not None:
        return _late_scores_numpy(query, docs, w, total)
    return _late_scores_python(query, docs, w, total)


def _late_scores_python(query: TokenMatrix, docs: Sequence[TokenMatrix], w: Sequence[float],
                        total: float) -> list[float]:
    """`late_scores` with popcounts on Python ints: nothing to import."""
    qbits, qinv = _terms(query)
    qt = [(p, n, z, inv * wi) for (p, n, z), inv, wi in zip(qbits, qinv, w)]
    out: list[float] = []
    for d in docs:
        dt, dinv = _terms(d)
        if not dt:
            out.append(0.0)
            continue
        s = 0.0
        if min(dinv) == max(dinv):
            scale = dinv[0]
            for qp, qn, qz, qw in qt:
                best = max([2 * ((qp & dp) | (qn & dn)).bit_count() - (qz & dz).bit_count()
                            for dp, dn, dz in dt])
                s += qw * best * scale
        else:
            for qp, qn, qz, qw in qt:
                scaled = max([(2 * ((qp & dp) | (qn & dn)).bit_count() - (qz & dz).bit_count()) * di
                              for (dp, dn, dz), di in zip(dt, dinv)])
                s += qw * scaled
        out.append(s / total)
    return out


@functools.cache
def _bitwise_count() -> Any:
    """numpy's popcount ufunc (numpy 2.0 and later), else None."""
    import numpy as np

    return getattr(np, "bitwise_count", None)


def _planes(planes: bytes, tokens: int, width: int) -> np.ndarray:
    """Bit planes as a (tokens, 2, words) array: uint64 words when a plane is a whole
    number of them (384 dimensions: 6), else bytes."""
    import numpy as np

    dtype = "<u8" if width % 8 == 0 else "u1"
    return np.frombuffer(planes, dtype=dtype).reshape(tokens, 2, -1)


def _late_scores_numpy(query: TokenMatrix, docs: Sequence[TokenMatrix], w: Sequence[float],
                       total: float) -> list[float]:
    """`late_scores` over every document token at once, per query token: the popcounts of
    the pure-Python path on the stored planes (no parsing), each best match scaled by its
    token's 1/sqrt(nonzeros) and taken per document with `maximum.reduceat`."""
    import numpy as np

    popcount = _bitwise_count()
    sizes = [len(d.ids) for d in docs]
    have = [i for i, n in enumerate(sizes) if n]
    out = [0.0] * len(docs)
    if not have:
        return out
    width = query.width
    d = _planes(b"".join(doc.planes for doc in docs), sum(sizes), width)
    dp, dn = d[:, 0, :], d[:, 1, :]
    dz = dp | dn
    dnz = popcount(dz).sum(axis=1, dtype=np.int64)
    dinv = np.divide(1.0, np.sqrt(dnz), out=np.zeros(len(dnz)), where=dnz > 0)
    starts = np.cumsum([0, *sizes])[:-1][have]
    # The pure-Python path's arithmetic, operation for operation, so both give the same
    # floats: a new query (numpy loaded) and its repeat (no numpy) rank alike.
    scale = np.maximum.reduceat(dinv, starts)
    uniform = np.minimum.reduceat(dinv, starts) == scale
    _, qinv = _terms(query)
    q = _planes(query.planes, len(query.ids), width)
    sums = np.zeros(len(have))
    for (qp, qn), inv, wi in zip(q, qinv, w):
        agree = popcount((dp & qp) | (dn & qn)).sum(axis=1, dtype=np.int64)
        both = popcount(dz & (qp | qn)).sum(axis=1, dtype=np.int64)
        dots = 2 * agree - both
        qw = inv * wi
        sums += np.where(uniform, (qw * np.maximum.reduceat(dots, starts)) * scale,
                         qw * np.maximum.reduceat(dots * dinv, starts))
    for i, value in zip(have, sums / total):
        out[i] = float(value)
    return out


def neighbour_support(relevance: Mapping[int, float], neighbours: Mapping[int, Sequence[int]],
                      weight: float) -> dict[int, float]:
    """Each item's relevance plus `weight` times the best relevance among its neighbours.

    For transcripts: a chunk next to a relevant chunk of the same session (the question
    before an answer, the answer after a question) is more likely relevant itself, and
    an answer that shares no word with the query is found through the question it
    answers. Neighbours without a relevance count as 0.
    """
    out: dict[int, float] = {}
    for item, rel in relevance.items():
        near = [relevance.get(n, 0.0) for n in neighbours.get(item, ())]
        out[item] = rel + weight * max(near, default=0.0)
    return out


def rescale(scores: Sequence[float]) -> list[float]:
    """Min-max to [0, 1] (all 1.0 when the scores are equal)."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]
