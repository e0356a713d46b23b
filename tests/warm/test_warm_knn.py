"""The warm index's KNN (`hippo.warm.index`) gives exactly the store's hits: the same
ids, in the same order, at the same distances, for every kind of filter."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from hippo import warm
from hippo.store import connect
from hippo.store.filters import MemoryFilter
from hippo.warm.index import WarmIndex, WarmVectors
from tests.warm.stores import TAGS, TYPES, build, stamp, unit

pytestmark = pytest.mark.sqlite_only(reason="the warm index holds a SQLite file's vectors")


def hits(found: list) -> list[tuple[int, float]]:
    """(id, distance), nearest first, equal distances by id: vec0's KNN leaves ties in its
    own order (the store's exact scan and the warm index order them by id)."""
    return sorted(((h.id, h.distance) for h in found), key=lambda x: (x[1], x[0]))


def ordered(found: list) -> list[tuple[int, float]]:
    return [(h.id, h.distance) for h in found]


def random_filters(rng: random.Random) -> MemoryFilter:
    since = until = None
    if rng.random() < 0.35:
        a, b = sorted((stamp(rng), stamp(rng)))
        since, until = rng.choice([(a, b), (a, None), (None, b)])
        if rng.random() < 0.3:  # a range of a few hours: the store's point lookups
            since, until = a, a[:11] + "23:59:59.999Z"
    projects = rng.choice([None, None, ("A",), ("A", None), (None,), ("B", "C"), (),
                           ("nowhere",)])
    return MemoryFilter.search(
        projects=projects,
        types=tuple(rng.sample(TYPES, rng.choice([0, 0, 1, 2]))),
        tiers=tuple(rng.sample(("semantic", "procedural", "episodic"), rng.choice([0, 0, 1]))),
        tags=tuple(rng.sample(TAGS, rng.choice([0, 0, 0, 1, 2]))),
        since=since, until=until, include_superseded=rng.random() < 0.3)


@pytest.fixture
def store(db_path: Path) -> Path:
    build(db_path, 3000, seed=7)
    return db_path


def test_same_hits_as_the_store_for_every_filter(store: Path) -> None:
    index = WarmIndex(store, 1 << 30)
    db = connect(store, index=index)
    original = db.vectors._original
    assert isinstance(db.vectors, WarmVectors)
    rng, vrng = random.Random(3), np.random.default_rng(3)
    compared = 0
    for _ in range(160):
        f = random_filters(rng)
        q = unit(vrng)[0].tobytes()
        for k in (1, 7, 40):
            expected = hits(original.knn(q, k, f))
            got = db.vectors.knn(q, k, f)
            assert ordered(got) == hits(got) == expected, (f, k)
            compared += bool(expected)
    report = index.report()
    assert report["held"] and report["vectors"] == db.scalar("SELECT count(*) FROM memories_vec")
    assert report["served"] > report["delegated"] > 0  # narrow time ranges go to the store
    assert report["full_loads"] == 1 and compared > 200


def test_every_memory_filtered_out_and_k_beyond_the_store(store: Path) -> None:
    db = connect(store, index=WarmIndex(store, 1 << 30))
    original = db.vectors._original
    q = unit(np.random.default_rng(1))[0].tobytes()
    for f in (MemoryFilter.search(projects=("nowhere",)), MemoryFilter.search(tags=("x", "y", "z")),
              MemoryFilter.search(types=("todo",)), MemoryFilter.search(projects=("A",), tags=("z",))):
        for k in (0, 5, 5000):
            assert hits(db.vectors.knn(q, k, f)) == hits(original.knn(q, k, f)), (f, k)
    everything = db.vectors.knn(q, 10_000, MemoryFilter.search(include_superseded=True))
    assert hits(everything) == hits(original.knn(q, 10_000, MemoryFilter.search(include_superseded=True)))
    assert len(everything) == db.scalar(
        "SELECT count(*) FROM memories m JOIN memories_vec v ON v.memory_id = m.id "
        "WHERE m.status = 'active'")


def test_near_ties_order_as_sqlite_vec_measures_them(db_path: Path) -> None:
    """Vectors a float32 rounding apart: the product alone may order them otherwise;
    sqlite-vec's own distance decides, as in the store."""
    build(db_path, 200, seed=2)
    db = connect(db_path)
    rng = np.random.default_rng(5)
    base = unit(rng)[0]
    with db.transaction():
        for i in range(1, 120):
            v = base + rng.standard_normal(base.shape).astype("<f4") * np.float32(1e-6)
            db.vectors.put(i, v.astype("<f4"), project="", type="fact",
                                   tier="semantic", created=0)
            db.execute("UPDATE memories SET project = NULL, status = 'active', "
                       "superseded_by = NULL WHERE id = ?", (i,))
    original = db.vectors
    db = connect(db_path, index=WarmIndex(db_path, 1 << 30))  # a warm process's open
    for f in (MemoryFilter.search(), MemoryFilter.search(projects=(None,))):
        for k in (1, 10, 50):
            assert hits(db.vectors.knn(base.tobytes(), k, f)) == hits(
                original.knn(base.tobytes(), k, f))


def test_a_warm_process_searches_from_memory(store: Path) -> None:
    """Through `Hippo`: a call whose environment carries the warm engine opens its store
    with the file's index, by construction: its vectors answer from memory, with the
    plain store's hits."""
    from hippo.config import load
    from hippo.console.environment import Environment
    from hippo.core import Hippo
    from hippo.retrieve.pipeline import search

    settings = load({"db": str(store), "embedder": "hash"})
    plain = Hippo(settings)
    assert not isinstance(plain.db.vectors, WarmVectors)
    cold = [r["id"] for r in search(plain, "memory 12").results]
    engine = warm.Warm()
    h = Hippo(settings, env=Environment.process(warm=engine))
    assert isinstance(h.db.vectors, WarmVectors)
    assert h.db.vectors._index is engine.index(store)
    assert [r["id"] for r in search(h, "memory 12").results] == cold
    (report,) = engine.report()["vectors"].values()
    assert report["held"] and report["served"] >= 1
