"""Pairs of memories at or above a cosine threshold, within one partition (type, project).

Two exact strategies that find the same pairs:
- `knn_pairs`: one sqlite-vec KNN query per changed memory (cost ~ changed x partition,
  each query a brute-force scan inside vec0) — the nightly path when few things changed;
- `scan_pairs`: one pass over the stored vectors with blocked matrix products (cost ~ one
  table scan + BLAS) — for large change sets (memory: the changed vectors plus one chunk
  per partition) and for `--full` (memory: the eligible vectors, 1.5 KB each at 384-d).
Similarity is 1 - vec0's cosine distance, and the same cosine computed in float32 here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from hippo.store import Store

Key = tuple[str, str]  # (type, project or "") — vec0's own metadata columns
Pairs = dict[tuple[int, int], float]  # (lower id, higher id) -> cosine

KNN_MAX = 4096  # sqlite-vec's limit on k
CHUNK = 4096  # stored vectors compared per matrix product while streaming
SIMS_BUDGET = 1 << 24  # floats in one block of similarities (64 MB)


def _add(pairs: Pairs, a: int, b: int, sim: float) -> None:
    key = (a, b) if a < b else (b, a)
    pairs[key] = max(pairs.get(key, -1.0), round(sim, 6))


def knn_pairs(db: Store, changed: Collection[int], eligible: Mapping[int, Key],
              threshold: float, k: int = 16) -> Pairs:
    """Neighbours of each changed memory via vec0 KNN, kept when eligible and close enough."""
    pairs: Pairs = {}
    for mid in sorted(changed):
        blob = db.vectors.embeddings([mid]).get(mid)
        if blob is None:
            continue
        mtype, project = eligible[mid]
        size = k
        while True:
            rows = [(other, 1.0 - distance) for other, distance
                    in db.vectors.nearest(blob, size, type=mtype, project=project)]
            # Grow k while even the farthest neighbour returned is still a hit.
            if len(rows) == size and rows[-1][1] >= threshold and size < KNN_MAX:
                size = min(size * 4, KNN_MAX)
                continue
            break
        for other, sim in rows:
            if other != mid and sim >= threshold and other in eligible:
                _add(pairs, mid, other, sim)
    return pairs


def _unit(vecs: np.ndarray) -> np.ndarray:
    import numpy as np

    vecs /= np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
    return vecs


def scan_pairs(db: Store, changed: Collection[int] | None, eligible: Mapping[int, Key],
               threshold: float) -> Pairs:
    """All pairs touching `changed` (every pair when None) from one scan of the vectors."""
    if changed is None:
        return _all_pairs(db, eligible, threshold)
    import numpy as np

    queries: dict[Key, tuple[list[int], Any]] = {}
    for key in {eligible[m] for m in changed if m in eligible}:
        ids = sorted(m for m in changed if eligible.get(m) == key)
        found = db.vectors.embeddings(ids)
        kept = [(m, found[m]) for m in ids if m in found]
        if kept:
            vecs = np.frombuffer(b"".join(b for _, b in kept), dtype="<f4")
            queries[key] = ([m for m, _ in kept], _unit(vecs.reshape(len(kept), -1).copy()))
    pairs: Pairs = {}
    buffers: dict[Key, tuple[list[int], list[bytes]]] = {}

    def flush(key: Key) -> None:
        ids, blobs = buffers.pop(key)
        qids, qvecs = queries[key]
        chunk = _unit(np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), -1).copy())
        sims = qvecs @ chunk.T
        for r, c in zip(*np.nonzero(sims >= threshold)):
            if qids[r] != ids[c]:
                _add(pairs, qids[r], ids[c], float(sims[r, c]))

    for mid, mtype, project, blob in db.reindex.memory_vectors():
        key = (mtype, project)
        if key in queries and mid in eligible:
            buf = buffers.setdefault(key, ([], []))
            buf[0].append(mid)
            buf[1].append(blob)
            if len(buf[0]) >= CHUNK:
                flush(key)
    for key in list(buffers):
        flush(key)
    return pairs


def _all_pairs(db: Store, eligible: Mapping[int, Key], threshold: float) -> Pairs:
    """Every pair once, per partition: the partition in memory, compared block by block."""
    import numpy as np

    sizes = Counter(eligible.values())
    dim = None
    parts: dict[Key, tuple[Any, Any]] = {}
    filled: Counter[Key] = Counter()
    for mid, mtype, project, blob in db.reindex.memory_vectors():
        key = (mtype, project)
        if mid not in eligible or eligible[mid] != key:
            continue
        if dim is None:
            dim = len(blob) // 4
        if key not in parts:  # preallocated: no list of blobs, no copies
            parts[key] = (np.zeros(sizes[key], dtype=np.int64),
                          np.zeros((sizes[key], dim), dtype=np.float32))
        ids, vecs = parts[key]
        i = filled[key]
        ids[i] = mid
        vecs[i] = np.frombuffer(blob, dtype="<f4")
        filled[key] += 1
    pairs: Pairs = {}
    for key in sorted(parts):
        n = filled[key]
        ids, vecs = parts.pop(key)
        ids, vecs = ids[:n], _unit(vecs[:n])
        block = max(16, min(1024, SIMS_BUDGET // max(n, 1)))
        for lo in range(0, n, block):  # each block against itself and what follows
            sims = vecs[lo:lo + block] @ vecs[lo:].T
            for r, c in zip(*np.nonzero(sims >= threshold)):
                if r < c:
                    _add(pairs, int(ids[lo + r]), int(ids[lo + c]), float(sims[r, c]))
    return pairs
