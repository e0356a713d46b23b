"""The Brain's vectors of one SQLite store held in memory by a warm process, and the exact
KNN over them (numpy), with the same hits as the store's own search.

A store opened with the index (`hippo.store.connect(..., index=)`) builds its `vectors` with
`WarmIndex.vectors`: a `WarmVectors` whose `knn` first brings the arrays
up to date with the store's vector log (`SqliteVectors.sync`: microseconds when
nothing changed, the changed ids' vectors when another process wrote some, everything
again when the file, its schema or its model changed), then scans them in memory: a
float32 product over the blocks (one per project) the filters name ranks the rows vec0's
columns would let through; the best are checked against `memories` as the store checks
them, more until `k` survive; every candidate within the product's error bound of the k-th
is measured by sqlite-vec itself, and the top `k` by (distance, id) is the answer. The
store answers what the index cannot serve: a time range few memories fall in (its point
lookups win), a connection inside a transaction, a file without the vector log, a store
over `max_bytes`, a zero vector (sqlite-vec's distance is NaN).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hippo.store.vectors import VecHit
from hippo.timeutil import epoch
from hippo.warm.arrays import Arrays, Held

if TYPE_CHECKING:
    from hippo.store import Store
    from hippo.store.filters import MemoryFilter

EPS32 = 2.0 ** -24
KEEP_BATCH = 4096  # ids per post-check; past this many candidates, one query of all allowed
# Candidates within the error bound of the k-th are measured by sqlite-vec; when more are
# (a hashing model's many equal distances), the store's own scan is the cheaper answer.
MEASURE_MOST = 8192


def _error_bound(dim: int) -> float:
    """Bound on |the product's distance - sqlite-vec's|: sqlite-vec's sums of `dim` float32
    products are each off by at most dim·eps relative, so its distance by 2·dim·eps + 2·eps;
    the product's by dim·eps and a few eps (1/length, two products, the subtraction)."""
    return 4.0 * (dim + 4) * EPS32


class WarmVectors:
    """A store's `vectors` whose Brain `knn` answers from the warm index; everything else
    is the store's own (`original`)."""

    def __init__(self, index: WarmIndex, original: Any) -> None:
        self._index, self._original = index, original

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)

    def knn(self, query: bytes, k: int, filters: MemoryFilter) -> list[VecHit]:
        return self._index.knn(self._original, query, k, filters)


class WarmIndex:
    """One store file's Brain vectors in memory."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path, self.max_bytes, self._lock = Path(path), max_bytes, threading.RLock()
        self._held: Held | None = None
        self._codes: dict[str, int] = {}
        self._file: tuple[int, int] | None = None
        self._ident: tuple[Any, ...] | None = None
        self._seq, self._why = 0, "not loaded yet"
        self._tail: tuple[tuple[int, int], ...] = ()  # the log's last entries at _seq
        self._stats = dict.fromkeys(("full_loads", "incremental_syncs", "changes_applied",
                                     "served", "delegated"), 0)
        self._last_sync: float | None = None

    # -- the store's side --------------------------------------------------------------
    def vectors(self, original: Any) -> WarmVectors:
        """The `vectors` of a SQLite store opened with this index: its own (`original`,
        `SqliteVectors`) with Brain `knn` answered from memory (brought up to date first)."""
        return WarmVectors(self, original)

    def sync(self, db: Store) -> None:
        """Bring the vectors in memory up to date with `db`, a store opened with this index
        (a full load the first time)."""
        vectors = db.vectors
        original = vectors._original if isinstance(vectors, WarmVectors) else vectors
        with self._lock:
            self._sync(original)

    def _sync(self, vectors: Any) -> bool:
        """True when the arrays hold the store's current vectors (lock held)."""
        file = _file_id(self.path)
        known = self._ident if file == self._file and file is not None else None
        found = vectors.sync(known, self._seq, self._load)
        if found.status == "busy":
            return False
        if found.status == "nolog":
            self._forget("no vector log (a file without schema step 0008)")
            return False
        if found.status == "changes" and (
                (found.changed and self._held is None) or self._diverged(found)):
            found = vectors.sync(None, 0, self._load)  # may fit now: count again
        self._file, self._ident, self._seq = file, found.ident, found.seq
        self._tail = found.tail
        self._last_sync = time.time()
        if found.status == "changes" and found.changed and self._held is not None:
            self._apply(found.changed)
            self._stats["incremental_syncs"] += 1
            self._stats["changes_applied"] += len(found.changed)
        return self._held is not None

    def _diverged(self, found: Any) -> bool:
        """Whether the file's log went another way than the one loaded here (an older copy
        written over it in place, then written to): the entries it holds numbered up to
        ours must be the ones we saw, with the vectors held here, and each of ours it no
        longer holds there must have been written again since."""
        if self._held is None:
            return False
        ours = set(self._tail)
        again = {row[0] for row in found.changed}
        for key, seq, blob in found.window:
            if (key, seq) not in ours:
                return True
            held = self._held.home.get(key) is not None
            if (blob is None) == held or (held and blob != self._held.vector(key).tobytes()):
                return True
        there = {(key, seq) for key, seq, _ in found.window}
        return any(entry not in there and entry[0] not in again for entry in ours)

    def _forget(self, why: str) -> None:
        if self._held is not None:
            self._held.clear()
        self._held, self._ident, self._why = None, None, why

    def _load(self, ident: tuple[Any, ...], counts: dict[str, int],
              rows: Iterable[tuple[Any, ...]]) -> None:
        """A full load (inside the store's read transaction); `counts`: vectors by project."""
        self._forget("")
        self._stats["full_loads"] += 1
        dim, count = int(ident[3] or 0), sum(counts.values())
        if not dim:
            self._why = "no Brain vectors"
            return
        if Arrays.bytes_for(dim, count) > self.max_bytes:
            self._why = f"{count} vectors would take over max_bytes ({self.max_bytes})"
            return
        held = self._held = Held(dim, self.max_bytes)
        slack = Arrays.bytes_for(dim, count + 16 * len(counts)) <= self.max_bytes // 1.125
        for project, n in counts.items():
            held.blocks[self._code(project)] = Arrays(dim, n + (n // 8 + 16 if slack else 0))
        self._apply(rows)

    def _apply(self, rows: Iterable[tuple[Any, ...]]) -> None:
        for key, blob, project, type_, tier, created in rows:
            held = self._held
            if held is None:
                return
            if blob is None:
                held.drop(int(key))
                continue
            vec = np.frombuffer(blob, dtype="<f4")
            if vec.size != held.dim:
                self._forget(f"a vector of {vec.size} floats, not the model's {held.dim}")
                return
            if not held.put(int(key), vec, self._code(project),
                            (self._code(type_), self._code(tier)), int(created)):
                self._forget(f"{held.n + 1} vectors would take over max_bytes "
                             f"({self.max_bytes})")
                return

    def _code(self, label: Any) -> int:
        return self._codes.setdefault(str(label or ""), len(self._codes))

    # -- search ------------------------------------------------------------------------
    def knn(self, original: Any, query: bytes, k: int,
            filters: MemoryFilter) -> list[VecHit]:
        """`SqliteVectors.knn`'s answer (the exact top `k` the filters allow, nearest
        first, ties by id), from memory when the index can serve it."""
        if k <= 0:
            return []
        hits = None
        narrow = bool(filters.since or filters.until) and original._narrow(filters)
        with self._lock:
            if not narrow and self._sync(original):
                hits = self._search(original, query, k, filters)
            self._stats["served" if hits is not None else "delegated"] += 1
        return hits if hits is not None else original.knn(query, k, filters)

    def _search(self, original: Any, query: bytes, k: int,
                filters: MemoryFilter) -> list[VecHit] | None:
        held = self._held
        assert held is not None
        q = np.frombuffer(query, dtype="<f4") if len(query) == 4 * held.dim else None
        qnorm = float(np.linalg.norm(q.astype(np.float64))) if q is not None else 0.0
        if q is None or held.zero or not qnorm or not np.isfinite(qnorm):
            return None
        blocks = list(held.blocks.values())
        if filters.projects is not None:  # vec0 holds global as '', as an empty list allows
            codes = {self._codes.get(p or "") for p in filters.projects or [""]}
            blocks = [b for c, b in held.blocks.items() if c in codes]
        parts, keys = [], []
        for b in blocks:
            if not b.n:
                continue
            # Each block whole in one product (memory-bound: gathering the rows the
            # other filters allow first would copy them, slower than reading them all).
            approx = 1 - (b.vecs[:b.n] @ q) * (b.inv[:b.n] * np.float32(1 / qnorm))
            rows = self._prefilter(b, filters)
            parts.append(approx if rows is None else approx[rows])
            keys.append(b.ids[:b.n] if rows is None else b.ids[rows])
        if not parts or not sum(len(p) for p in parts):
            return []
        approx, ids = np.concatenate(parts), np.concatenate(keys)
        chosen = _choose(approx, k, _error_bound(held.dim),
                         lambda c: _allowed(original, filters, ids, c))
        if chosen is None:
            return None
        found = original.distances(
            query, [(int(ids[p]), held.vector(int(ids[p])).tobytes()) for p in chosen])
        best = sorted(found.items(), key=lambda kv: (kv[1], kv[0]))[:k]
        return [VecHit(key, dist) for key, dist in best]

    def _prefilter(self, a: Arrays, filters: MemoryFilter) -> np.ndarray | None:
        """The rows of a block vec0's own columns allow (as `_vec0_constraints`, the
        project aside: one block is one project); None: every row."""
        n = a.n
        mask: np.ndarray | None = None

        def both(m: np.ndarray) -> None:
            nonlocal mask
            mask = m if mask is None else mask & m

        for col, values in ((0, filters.types), (1, filters.tiers)):
            if values:
                codes = [self._codes[v] for v in values if v in self._codes]
                both(np.isin(a.labels[:n, col], codes))
        if filters.since:
            both(a.created[:n] >= epoch(filters.since))
        if filters.until:
            both(a.created[:n] <= epoch(filters.until))
        return None if mask is None else np.flatnonzero(mask)

    def report(self) -> dict[str, Any]:
        with self._lock:
            a = self._held
            return {"vectors": a.n if a else 0, "bytes": a.nbytes() if a else 0,
                    "held": a is not None, "dim": a.dim if a else None,
                    "projects": len(a.blocks) if a else 0,
                    "why_not": None if a else self._why, "max_bytes": self.max_bytes,
                    "log_seq": self._seq, "last_sync": self._last_sync, **self._stats}


def _file_id(path: Path) -> tuple[int, int] | None:
    st = os.stat(path) if os.path.exists(path) else None
    return (st.st_dev, st.st_ino) if st else None


def _allowed(original: Any, filters: MemoryFilter, ids: np.ndarray,
             positions: np.ndarray) -> np.ndarray:
    """Which of `positions` (into `ids`) the filters allow, checked against `memories`:
    by id (the store's own post-check) when few, else against every allowed id."""
    if len(positions) > KEEP_BATCH:
        allowed = np.fromiter(original.allowed(filters), np.int64)
        return np.isin(ids[positions], allowed)
    keep = original._keep([int(i) for i in ids[positions]], filters)
    return np.fromiter((int(i) in keep for i in ids[positions]), bool, len(positions))


def _smallest(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest `values`, smallest first."""
    if count >= len(values):
        return np.argsort(values, kind="stable")
    part = np.argpartition(values, count - 1)[:count]
    return part[np.argsort(values[part], kind="stable")]


def _choose(approx: np.ndarray, k: int, bound: float,
            allowed: Any) -> Sequence[int] | None:
    """Positions of every allowed candidate that may be in the exact top `k`: the `k`
    best allowed by `approx`, and every allowed one within 2·bound of the k-th of them;
    None when more than MEASURE_MOST would be."""
    total = len(approx)
    fetch = min(2 * k, total)
    while True:
        top = _smallest(approx, fetch)
        ok = top[allowed(top)]
        if len(ok) >= k or fetch >= total:
            break
        fetch = min(fetch * 4, total)
    if len(ok) < k:
        return [int(p) for p in ok]
    edge = approx[ok[k - 1]] + 2 * bound
    near = np.flatnonzero(approx <= edge)
    if len(near) > MEASURE_MOST:
        return None
    seen = set(top.tolist())
    more = np.array([p for p in near.tolist() if p not in seen], dtype=np.int64)
    picked = [int(p) for p in ok if approx[p] <= edge]
    if len(more):
        picked += [int(p) for p in more[allowed(more)]]
    return picked
