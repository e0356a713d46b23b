"""The warm engine's in-memory Brain vector scan (`hippo.warm.index`) against sqlite-vec's.

Usage: python bench/bench_warm_vectors.py [--n 100000] [--queries 30] [--k 30]

Builds (once, cached in bench/out/ by N) a store of N memories with random unit vectors
of the hashing embedder's 384 dimensions, written through the store (so the vector log
is filled as by `hippo add`), then takes medians over the same queries of:
  (a) the store's own exact KNN (`SqliteVectors.knn`: sqlite-vec's scan),
  (b) the warm index's KNN (`WarmIndex.knn`, in memory, synced before each call),
for the default search filters (the current project and global, superseded left out) and
for every project (the whole matrix), checked to give the same hits; and the whole search (`hippo.retrieve.pipeline.search`)
in a plain process and in a warm one, side by side, alternating which goes first.
Writes bench/out/warm_vectors-N.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_search import notes, questions, records

OUT = Path(__file__).resolve().parent / "out"
DIM = 384  # the hashing embedder's (and the local model's) dimensions


def build(path: Path, n: int, embedder: object = None) -> None:
    """The store (`embedder`'s table: the hashing one's by default, 384 dimensions)."""
    import numpy as np

    from hippo.embed.cache import content_hash, ensure_store
    from hippo.embed.hashed import HashEmbedder
    from hippo.memory.memtypes import BUILTIN
    from hippo.memory.records import dedup_key
    from hippo.store import connect
    from hippo.timeutil import epoch, normalise

    tmp = path.with_suffix(".building")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    db = connect(tmp)
    ensure_store(db, "brain", embedder or HashEmbedder())  # type: ignore[arg-type]
    rng = np.random.default_rng(4)
    t = time.perf_counter()
    texts = notes(n)
    batch = 5000
    with db.transaction():
        for start in range(0, n, batch):
            recs = list(records(texts[start:start + batch], seed=start))
            vecs = rng.standard_normal((len(recs), DIM)).astype("<f4")
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            for i, (r, v) in enumerate(zip(recs, vecs), start=start + 1):
                created = normalise(str(r["created_at"]))
                mtype, project = str(r["type"]), r["project"]
                tier = BUILTIN[mtype].tier
                db.memories.insert({
                    "id": i, "text": r["text"], "type": mtype, "tier": tier,
                    "project": project, "tags": "[]", "importance": r["importance"],
                    "author": "machine", "status": "active", "pinned": 0, "canonical": 0,
                    "confidence": 0.5, "created_at": created, "updated_at": created,
                    "confirmed_at": None, "verified_at": None, "consolidated_into": None,
                    "superseded_by": None, "source": None,
                    "dedup_key": dedup_key(mtype, project, str(r["text"])),
                    "content_hash": content_hash(str(r["text"])),
                })
                db.vectors.put(i, v, project=str(project or ""), type=mtype,
                                       tier=tier, created=epoch(created))
            print(f"  inserted {min(start + batch, n)}/{n}", file=sys.stderr, end="\r")
    db.close()
    os.replace(tmp, path)
    print(f"  built {n} memories in {time.perf_counter() - t:.0f} s", file=sys.stderr)


def med(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def timed(fn: object, args: list[object]) -> list[float]:
    out = []
    for a in args:
        t = time.perf_counter()
        fn(a)  # type: ignore[operator]
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--k", type=int, default=30)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    path = OUT / f"warm-vectors-{args.n}.db"
    if not path.exists():
        build(path, args.n)
    os.environ.setdefault("HIPPO_HOME", str(OUT / "home"))
    os.environ["HIPPO_PROJECT"] = "proj1"
    os.environ["HIPPO_SERVE"] = "off"

    import hippo
    from hippo import warm
    from hippo.retrieve.pipeline import make_filters, search
    from hippo.store.filters import MemoryFilter

    qs = questions(args.queries)
    cold = hippo.open(path, embedder="hash")
    filters = make_filters(cold)
    blobs = [cold.embed([q])[0].astype("<f4").tobytes() for q in qs]
    store = cold.db.vectors
    store.knn(blobs[0], args.k, filters)  # page cache warm

    from hippo.console.environment import Environment

    engine = warm.Warm()
    hot = hippo.open(path, embedder="hash", env=Environment.process(warm=engine))
    t = time.perf_counter()
    index = engine.index(hot.settings.database)
    index.sync(hot.db)  # the store is opened with the index (by construction)
    load_ms = (time.perf_counter() - t) * 1000
    same = all([(h.id, h.distance) for h in store.knn(b, args.k, filters)]
               == [(h.id, h.distance) for h in hot.db.vectors.knn(b, args.k, filters)]
               for b in blobs)
    ids = list(range(len(blobs)))
    sqlite_ms = timed(lambda i: store.knn(blobs[i], args.k, filters), ids)
    warm_ms = timed(lambda i: hot.db.vectors.knn(blobs[i], args.k, filters), ids)
    every = MemoryFilter.search()  # every project: the whole matrix
    same = same and all([(h.id, h.distance) for h in store.knn(b, args.k, every)]
                        == [(h.id, h.distance) for h in hot.db.vectors.knn(b, args.k, every)]
                        for b in blobs)
    sqlite_all_ms = timed(lambda i: store.knn(blobs[i], args.k, every), ids)
    warm_all_ms = timed(lambda i: hot.db.vectors.knn(blobs[i], args.k, every), ids)
    for q in qs:  # query vectors cached, modules loaded
        search(cold, q)
        search(hot, q)
    side: dict[str, list[float]] = {"plain": [], "warm": []}
    for i, q in enumerate(qs):
        order = (("plain", cold), ("warm", hot)) if i % 2 else (("warm", hot), ("plain", cold))
        for name, h in order:
            side[name] += timed(lambda q, h=h: search(h, q), [q])
    result = {
        "memories": args.n, "queries": len(qs), "k": args.k, "same_hits": same,
        "load_avg": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
        "full_load_ms": round(load_ms, 1),
        "knn_sqlite_vec_ms": med(sqlite_ms), "knn_warm_ms": med(warm_ms),
        "knn_warm_p95_ms": round(sorted(warm_ms)[int(0.95 * len(warm_ms)) - 1], 2),
        "knn_every_project_sqlite_vec_ms": med(sqlite_all_ms),
        "knn_every_project_warm_ms": med(warm_all_ms),
        "search_plain_ms": med(side["plain"]), "search_warm_ms": med(side["warm"]),
        "index": index.report(),
    }
    print(f"{'':<28} {'sqlite-vec':>11} {'warm':>9}")
    print(f"{f'exact KNN (k={args.k}), default ms':<28} {result['knn_sqlite_vec_ms']:>11} "
          f"{result['knn_warm_ms']:>9}")
    print(f"{'  every project ms':<28} {result['knn_every_project_sqlite_vec_ms']:>11} "
          f"{result['knn_every_project_warm_ms']:>9}")
    print(f"{'whole search ms':<28} {result['search_plain_ms']:>11} "
          f"{result['search_warm_ms']:>9}")
    print(f"same hits: {same}; full load {result['full_load_ms']} ms; "
          f"{result['index']['bytes'] / 2**20:.0f} MiB held")
    (OUT / f"warm_vectors-{args.n}.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
