"""The stages Brain search (`hippo.retrieve.pipeline`) and Echo search
(`hippo.retrieve.echo_search`) share: BM25 beside the vector scan, the vector search
inside the time windows a query names, late interaction's relevance over a fused pool,
and one wording of every degradation.

Each is pure where it can be: the store and the model come in as arguments or callables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from hippo.retrieve.params import PARALLEL_MIN_ROWS

if TYPE_CHECKING:
    from hippo.retrieve.dates import Window
    from hippo.retrieve.fuse import Fused
    from hippo.store import Store
    from hippo.store.vectors import VecHit

T = TypeVar("T")
MAX_WINDOWS = 4  # vector searches inside named dates, at most, per query

# What a search does instead when a stage cannot run: one wording for Brain and Echo.
LEXICAL_ONLY = "lexical results only"
VECTOR_ONLY = "vector results only"
FUSED_ORDER = "fused order"
LOCAL_ORDER = "local order"


def note(exc: BaseException | str) -> str:
    """An error as one line (its message, else its type)."""
    if isinstance(exc, str):
        return " ".join(exc.split())
    return " ".join(str(exc).split()) or type(exc).__name__


def degradation(stage: str, why: BaseException | str, instead: str) -> str:
    """How a degradation is named: `stage: why (what the search does instead)`."""
    return f"{stage}: {note(why)} ({instead})"


def start_lexical(db: Store, store: str, run: Callable[[Store], T], thread: str,
                  min_rows: int = PARALLEL_MIN_ROWS) -> Callable[[], T]:
    """Start a BM25 retriever `run`; calling the result waits for its hits (or its error).

    On a big store (`min_rows` or more rows) it runs in a thread on a second connection while the caller embeds
    the query and scans the vectors: SQLite leaves the GIL while it works, so on two
    cores the BM25 time disappears behind the scan. Ids whose row is gone by the time
    records are read are dropped by the caller, as for any concurrent delete.
    """
    if db.lexical.extent(store) < min_rows:
        return lambda: run(db)
    from hippo.retrieve.background import beside

    # `beside` still takes the SQLite store (issue 23 moves it behind the store).
    return beside(db, run, thread)


def window_hits(windows: Sequence[Window], k: int,
                search: Callable[[Window], list[VecHit] | None]) -> list[int]:
    """The `k` nearest ids over the searches inside the first windows, nearest first.

    `search(window)` gives a window's hits, or None when the window is out of bounds."""
    hits: dict[int, float] = {}
    for w in windows[:MAX_WINDOWS]:
        for x in search(w) or ():
            hits[x.id] = min(x.distance, hits.get(x.id, x.distance))
    return sorted(hits, key=lambda i: (hits[i], i))[:k]


def late_relevance(pool: Sequence[int], raw: Sequence[float],
                   fused: Sequence[Fused]) -> dict[int, float]:
    """Late interaction's relevance: the pool's scores min-max scaled; every other fused
    candidate keeps its fused order below the lowest of those."""
    from hippo.retrieve.late import rescale

    scaled = rescale(raw)
    out = dict(zip(pool, scaled))
    floor = min(scaled, default=0.0)
    out.update({f.id: floor * f.score for f in fused if f.id not in out})
    return out
