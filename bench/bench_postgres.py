"""PostgreSQL + pgvector against SQLite at 100k and 1M memories (a documented bench, not CI).

Usage: python bench/bench_postgres.py [--sizes 100000 1000000] [--queries 200]
           [--seconds 30] [--writers 8] [--searchers 8] [--url postgresql://...]
           [--workdir DIR] [--keep]
Quick run: python bench/bench_postgres.py --sizes 10000 --seconds 5

Data: memories with 384-d normalised vectors drawn around cluster centres (one centre per
1,000 memories, Gaussian jitter of norm ~0.5, so a memory's nearest neighbours are its
cluster-mates at cosine ~0.8, and the top 10 among them is a real ranking; uniform random
384-d vectors are all nearly orthogonal and make recall meaningless). Queries are fresh
draws around random centres.

For each size, the same memories in the same order go into a SQLite file and a
PostgreSQL schema, through the real write path (`hippo.store.connect`, `brain.add_many`
in transactions of 1,000: dedup lookup, insert, vector, audit), which gives the bulk add
rate of each. Then each query runs through `hippo.retrieve.vec.search` (the vector stage
of `hippo search`, `store.vectors.knn`): unfiltered and scoped to a project plus global
memories, as a search in a project is. SQLite answers exactly (sqlite-vec's scan);
PostgreSQL from its HNSW index (m 16, ef_construction 64, `hnsw.ef_search` as the backend
sets it, reported) above 20,000 vectors. Shown: p50/p95 latency per backend and HNSW
recall@10 against SQLite's exact top 10, and the same at other ef_search values
(`--ef-sweep`, set on the session in place of the backend's choice).

Last, on the largest size's schema: `--writers` processes add memories (each its own
connection, a few per transaction, some texts shared between writers so dedup must hold
under contention) while `--searchers` processes search, for `--seconds`. Every error is
counted; afterwards each acknowledged memory must be there exactly once, each shared text
once, and every active memory must have its vector: 0 errors, 0 lost, 0 duplicated.

The server is `--url` (any PostgreSQL 15+ with pgvector; its database gets a schema per
size, dropped afterwards unless `--keep`), else the tests' pgserver (tests/pgtest.py).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DIM = 384
PER_CENTRE = 1000
JITTER = 0.5  # norm of the noise added to a unit centre
BATCH = 1000
MODEL = "bench-clusters-384"
SUBJECTS = ["billing", "auth gateway", "replica", "indexer", "mobile app", "webhook",
            "ETL job", "cache", "consumer", "dashboard", "CDN", "flags", "runners"]
ACTIONS = ["retries three times", "pages on-call", "reads env settings", "is blue-green",
           "needs a migration", "keeps logs 30 days", "times out at 30 s", "caches 10 min"]
PROJECTS = ["proj0", "proj1", "proj2", None]


# -- data ------------------------------------------------------------------------------
def centres(n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((max(1, n // PER_CENTRE), DIM)).astype(np.float32)
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def around(c: np.ndarray, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors near centres `c[which]`."""
    noise = rng.standard_normal((len(which), DIM)).astype(np.float32) * (JITTER / DIM ** 0.5)
    v = c[which] + noise
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def batches(n: int, seed: int = 11):
    """(records, vectors) of `n` memories, BATCH at a time; the same for every backend."""
    rng = np.random.default_rng(seed)
    c = centres(n)
    for start in range(0, n, BATCH):
        idx = np.arange(start, min(start + BATCH, n))
        recs = [{"text": f"{SUBJECTS[i % 13]} {ACTIONS[i % 8]} (note {i})", "type": "fact",
                 "project": PROJECTS[i % 4], "importance": 0.5} for i in idx]
        yield recs, around(c, rng.integers(0, len(c), len(idx)), rng)


def queries(n: int, count: int, seed: int = 13) -> list[bytes]:
    rng = np.random.default_rng(seed)
    c = centres(n)
    return [v.astype("<f4").tobytes() for v in around(c, rng.integers(0, len(c), count), rng)]


# -- building --------------------------------------------------------------------------
def open_store(location: str | Path) -> Any:
    from hippo.store import connect

    return connect(location)


def build(location: str | Path, n: int) -> float:
    """Fill a new store with the `n` memories; returns memories added per second."""
    import hippo
    from hippo.memory.brain import add_many
    from hippo.memory.records import from_input

    types = hippo.open(None, embedder="hash").types
    db = open_store(location)
    try:
        with db.transaction():
            db.vectors.create("brain", MODEL, DIM, "bench")
        t = time.perf_counter()
        done = 0
        for recs, vecs in batches(n):
            mems = [from_input(r, types, default_project=None) for r in recs]
            with db.transaction():
                add_many(db, mems, vecs, actor="machine")
            done += len(mems)
            rate = done / (time.perf_counter() - t)
            print(f"  {location if isinstance(location, Path) else 'postgres'}: "
                  f"{done}/{n} ({rate:.0f}/s)", file=sys.stderr, end="\r")
        elapsed = time.perf_counter() - t
        print(file=sys.stderr)
        if not isinstance(location, Path):
            db.execute("ANALYZE memories_vec")  # as autovacuum would soon; the plan needs it
        return n / elapsed
    finally:
        db.close()


# -- searching -------------------------------------------------------------------------
SCOPES = {"all": None, "project": ("proj1", None)}


def timed_searches(location: str | Path, qs: list[bytes], scope: str, ef: int | None = None
                   ) -> tuple[list[float], list[list[int]], str | None]:
    """Latencies (ms) and top-10 ids of each query, and ef_search on a server. `ef`
    overrides the ef_search the backend chose (set on the session after the warm-up, which
    the backend, having set its own once, leaves alone)."""
    from hippo.retrieve.vec import search
    from hippo.store.filters import MemoryFilter

    db = open_store(location)
    try:
        filters = MemoryFilter.search(projects=SCOPES[scope])
        for q in qs[:5]:  # warm the caches
            search(db, q, 10, filters)
        if ef is not None:
            db.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
        times, tops = [], []
        for q in qs:
            t = time.perf_counter()
            hits = search(db, q, 10, filters)
            times.append((time.perf_counter() - t) * 1000)
            tops.append([h.id for h in hits])
        ef = None if isinstance(location, Path) else str(db.scalar("SHOW hnsw.ef_search"))
        return times, tops, ef
    finally:
        db.close()


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))], 2)


def recall(found: list[list[int]], exact: list[list[int]]) -> float:
    got = [len(set(f) & set(e)) / max(1, len(e)) for f, e in zip(found, exact)]
    return round(statistics.fmean(got), 4)


# -- concurrency -----------------------------------------------------------------------
def writer(url: str, w: int, seconds: float, out: Any) -> None:
    import hippo
    from hippo.memory.brain import add_many
    from hippo.memory.records import from_input

    types = hippo.open(None, embedder="hash").types
    rng = np.random.default_rng(100 + w)
    c = centres(PER_CENTRE * 10)
    acked: list[tuple[int, str]] = []
    errors: list[str] = []
    db = open_store(url)
    end = time.monotonic() + seconds
    j = 0
    while time.monotonic() < end:
        texts = [f"conc w{w} n{j + i}" for i in range(int(rng.integers(1, 5)))]
        if j % 4 == 0:
            texts.append(f"conc shared {j % 40}")  # every writer adds these: one row each
        j += len(texts)
        mems = [from_input({"text": t, "project": "conc"}, types, default_project=None)
                for t in texts]
        try:
            with db.transaction():
                changes = add_many(db, mems, around(c, rng.integers(0, len(c), len(mems)), rng),
                                   actor="machine")
            acked += [(ch.record["id"], ch.record["text"]) for ch in changes]
        except Exception as exc:  # noqa: BLE001 - every error is the result
            errors.append(f"{type(exc).__name__}: {exc}")
    db.close()
    out.put({"role": "writer", "acked": acked, "errors": errors})


def searcher(url: str, s: int, seconds: float, out: Any) -> None:
    from hippo.retrieve.vec import search
    from hippo.store.filters import MemoryFilter

    qs = queries(PER_CENTRE * 10, 200, seed=200 + s)
    db = open_store(url)
    errors: list[str] = []
    times: list[float] = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        t = time.perf_counter()
        try:
            search(db, qs[i % len(qs)], 10, MemoryFilter.search(projects=SCOPES["all"]))
            times.append((time.perf_counter() - t) * 1000)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}")
        i += 1
    db.close()
    out.put({"role": "searcher", "times": times, "errors": errors})


CHECK = ("SELECT m.text, count(*) AS n, count(v.memory_id) AS vectors, min(m.id) AS id "
         "FROM memories m LEFT JOIN memories_vec v ON v.memory_id = m.id "
         "WHERE m.project = 'conc' GROUP BY m.text")


def concurrency(url: str, writers: int, searchers: int, seconds: float) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(url, w, seconds, out)) for w in range(writers)]
    procs += [ctx.Process(target=searcher, args=(url, s, seconds, out))
              for s in range(searchers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + 300) for _ in procs]
    for p in procs:
        p.join()
    acked = [a for r in results if r["role"] == "writer" for a in r["acked"]]
    errors = [e for r in results for e in r["errors"]]
    times = [t for r in results if r["role"] == "searcher" for t in r["times"]]
    db = open_store(url)
    try:
        rows = {r["text"]: r for r in db.rows(CHECK)}
    finally:
        db.close()
    want = {text: mid for mid, text in acked}  # a shared text: every ack names one id
    lost = [t for t in want if t not in rows]
    duplicated = [t for t, r in rows.items() if r["n"] > 1]
    moved = [t for t, mid in want.items() if t in rows and rows[t]["id"] != mid]
    return {
        "writers": writers, "searchers": searchers, "seconds": seconds,
        "writes_acked": len(acked), "memories": len(want),
        "writes_per_s": round(len(acked) / seconds, 1),
        "searches": len(times), "search_p50_ms": pct(times, 50) if times else None,
        "search_p95_ms": pct(times, 95) if times else None,
        "errors": len(errors), "error_samples": sorted(set(errors))[:5],
        "lost": len(lost), "duplicated": len(duplicated), "other_id": len(moved),
        "unacked_rows": len([t for t in rows if t not in want]),
        "without_vector": len([t for t, r in rows.items() if r["vectors"] != r["n"]]),
    }


# -- one size --------------------------------------------------------------------------
def one_size(n: int, url: str, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    file = workdir / f"bench-{n}.db"
    file.unlink(missing_ok=True)
    out: dict[str, Any] = {"memories": n}
    print(f"{n} memories:", file=sys.stderr)
    out["sqlite_add_per_s"] = round(build(file, n))
    out["postgres_add_per_s"] = round(build(url, n))
    qs = queries(n, args.queries)
    for scope in SCOPES:
        s_times, exact, _ = timed_searches(file, qs, scope)
        p_times, found, ef = timed_searches(url, qs, scope)
        out[scope] = {"sqlite_exact_p50_ms": pct(s_times, 50),
                      "sqlite_exact_p95_ms": pct(s_times, 95),
                      "postgres_p50_ms": pct(p_times, 50), "postgres_p95_ms": pct(p_times, 95),
                      "hnsw_ef_search": ef, "recall_at_10": recall(found, exact)}
        for value in args.ef_sweep:  # the same queries at other ef_search values
            p_times, found, _ = timed_searches(url, qs, scope, value)
            out[scope][f"ef_{value}"] = {"p50_ms": pct(p_times, 50), "p95_ms": pct(p_times, 95),
                                         "recall_at_10": recall(found, exact)}
    return out


def _create(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(f'CREATE SCHEMA "{schema}"')


def _drop(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--searchers", type=int, default=8)
    ap.add_argument("--ef-sweep", type=int, nargs="*", default=[100, 400, 800],
                    help="also measure these hnsw.ef_search values (latency, recall)")
    ap.add_argument("--url", help="a PostgreSQL database with pgvector (default: pgserver)")
    ap.add_argument("--workdir", type=Path, help="where the SQLite files go (default: tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the schemas and files")
    args = ap.parse_args()
    os.environ.setdefault("HIPPO_HOME", tempfile.mkdtemp(prefix="hippo-bench-home-"))
    os.environ["HIPPO_NO_PROGRESS"] = "1"
    from tests.pgtest import base_url, with_schema

    base = args.url or base_url()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hippo-bench-pg-"))
    workdir.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    try:
        url = ""
        for n in args.sizes:
            schema = f"bench_{n}_{os.getpid()}"
            _create(base, schema)
            made.append(schema)
            url = with_schema(base, schema)
            print(json.dumps(one_size(n, url, workdir, args)), flush=True)
        print(f"concurrency on {args.sizes[-1]} memories:", file=sys.stderr)
        conc = concurrency(url, args.writers, args.searchers, args.seconds)
        print(json.dumps({"concurrency": conc}), flush=True)
        ok = conc["errors"] == conc["lost"] == conc["duplicated"] == conc["other_id"] == 0
        print(f"concurrency: {'PASS' if ok else 'FAIL'}", file=sys.stderr)
    finally:
        if not args.keep:
            for schema in made:
                _drop(base, schema)
            for f in workdir.glob("bench-*.db*"):
                f.unlink()


if __name__ == "__main__":
    main()
