"""Nightly `consolidate` cost: seconds and peak RSS, each run in a fresh process.

Cases (sizes are flags):
- real:      N memories embedded with the local model (varied generated sentences), then
             `--full` at N, then 1% new memories (half restatements of old ones) and the
             nightly incremental run — with the automatic strategy, and forced vec0 KNN and
             forced scan on copies of the same database;
- synthetic: N memories with random unit vectors inserted directly (one type, one project:
             the worst case for a partition), then 1% new (half near-duplicates) and the
             nightly run; `--synthetic-knn` also times forced vec0 KNN (slow: minutes at 100k).

Usage: python bench/bench_consolidate.py [--real 10000] [--synthetic 100000] [--new 0.01]
       [--synthetic-knn] [--synthetic-full] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

SERVICES = ["billing", "auth", "search", "ingest", "payments", "gateway", "scheduler",
            "notifier", "reports", "exporter", "catalog", "checkout", "inventory", "mailer",
            "profile", "analytics", "uploader", "thumbnailer", "webhooks", "ledger",
            "pricing", "shipping", "tracking", "support", "feeds", "ranking", "crawler",
            "indexer", "sessions", "audit"]
THINGS = ["session tokens", "invoices", "feature flags", "rate limits", "retry queue",
          "cache keys", "migration scripts", "API schema", "error budget", "cron schedule",
          "TLS certificates", "build artefacts", "log retention", "test fixtures",
          "connection pool", "dead letters", "user preferences", "audit trail"]
STORES = ["Postgres", "Redis", "S3", "SQLite", "a Kafka topic", "DynamoDB",
          "the shared NFS volume", "Elasticsearch", "a local disk cache", "Memcached"]
TOOLS = ["make", "poetry", "docker compose", "kubectl", "terraform", "the admin CLI",
         "a Jupyter notebook", "the ops dashboard", "pytest", "npm scripts"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "every night",
        "the first of the month", "each release"]
PEOPLE = ["Ana", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana", "Ines", "Jon"]
TEMPLATES = [
    ("fact", "The {s} service stores its {t} in {st}."),
    ("fact", "{p} owns the {t} of the {s} service and reviews changes on {d}."),
    ("procedure", "To rotate the {t} of {s}, run {tool} and redeploy on {d}."),
    ("procedure", "When {s} fails on {d}, check the {t} first, then restart it with {tool}."),
    ("tool", "Use {tool} to inspect the {t} of the {s} service."),
    ("config", "The {s} service reads its {t} settings from {st} at startup."),
    ("insight", "Most {s} incidents on {d} came from stale {t} in {st}."),
]
RESTATE = [  # a second wording of each template, for the 1% that repeat old memories
    "{s} keeps its {t} in {st}.",
    "The {t} of the {s} service belong to {p}, who reviews changes on {d}.",
    "Rotating the {t} of {s}: run {tool}, then redeploy on {d}.",
    "If {s} fails on {d}, look at the {t} first and restart it with {tool}.",
    "Inspect the {t} of the {s} service with {tool}.",
    "At startup the {s} service reads its {t} settings from {st}.",
    "Stale {t} in {st} caused most {s} incidents on {d}.",
]


def sentences(n: int, rng: random.Random) -> list[tuple[str, str, int, dict[str, str]]]:
    """`n` distinct (type, text, template, slots)."""
    out, seen = [], set()
    while len(out) < n:
        k = rng.randrange(len(TEMPLATES))
        slots = {"s": rng.choice(SERVICES), "t": rng.choice(THINGS), "st": rng.choice(STORES),
                 "tool": rng.choice(TOOLS), "d": rng.choice(DAYS), "p": rng.choice(PEOPLE)}
        mtype, tpl = TEMPLATES[k]
        text = tpl.format(**slots)
        if text not in seen:
            seen.add(text)
            out.append((mtype, text, k, slots))
    return out


def measure(db: Path, *, full: bool = False, knn_limit: int | None = None) -> dict:
    """Run one consolidate in a new process; its wall time and peak RSS."""
    cmd = [sys.executable, __file__, "--_run", str(db)]
    if full:
        cmd.append("--full")
    if knn_limit is not None:
        cmd += ["--knn-limit", str(knn_limit)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True,
                         env={**os.environ, "HIPPO_NO_PROGRESS": "1"})
    return json.loads(res.stdout)


def peak_rss_mb() -> float:
    """This process's peak RSS. Linux: VmHWM, because ru_maxrss survives exec and so would
    report the (larger) bench parent this child was forked from."""
    import resource

    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _run_child(db: str, full: bool, knn_limit: int | None) -> None:
    t = time.perf_counter()
    from hippo.core import Hippo
    from hippo.maintain import consolidate
    from hippo.maintain.settings import MaintainParams

    params = MaintainParams() if knn_limit is None else MaintainParams(knn_limit=knn_limit)
    h = Hippo.open(db)
    summary = consolidate.run(h, params, full=full, on_event=lambda ev: None)
    h.close()
    print(json.dumps({"seconds": round(time.perf_counter() - t, 2),
                      "job_seconds": summary["seconds"],
                      "peak_rss_mb": peak_rss_mb(),
                      "summary": summary}))


def snapshot(db: Path, to: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        src = Path(f"{db}{suffix}")
        if src.exists():
            shutil.copyfile(src, f"{to}{suffix}")
    return to


def real_case(work: Path, n: int, frac: float, rng: random.Random) -> list[dict]:
    from hippo.core import Hippo
    from hippo.memory.records import from_input

    db = work / f"real-{n}.db"
    new = max(1, int(n * frac))
    rows = sentences(n + new, rng)
    base, fresh = rows[:n], rows[n:]
    h = Hippo.open(db, embedder="local")
    t = time.perf_counter()
    projects = ["web", "api", None]

    def mem(i: int, mtype: str, text: str):  # type: ignore[no-untyped-def]
        return from_input({"text": text, "type": mtype, "author": "machine",
                           "project": projects[i % 3]}, h.types, default_project=None)

    h.add([mem(i, m, text) for i, (m, text, _, _) in enumerate(base)], actor="bench")
    embed_s = time.perf_counter() - t
    h.close()
    out = [{"case": f"real {n}: --full", **measure(db, full=True), "setup_embed_s":
            round(embed_s, 1)}]
    h = Hippo.open(db)
    restated = []
    for i in rng.sample(range(n), new // 2):  # old memories said again in other words
        mtype, _, k, slots = base[i]
        restated.append(mem(i, mtype, RESTATE[k].format(**slots)))
    extra = [mem(n + i, m, text) for i, (m, text, _, _) in enumerate(fresh[: new - new // 2])]
    h.add(restated + extra, actor="bench")
    h.close()
    copy_knn = snapshot(db, work / f"real-{n}-knn.db")
    copy_scan = snapshot(db, work / f"real-{n}-scan.db")
    out.append({"case": f"real {n}: nightly +{new} (auto)", **measure(db)})
    out.append({"case": f"real {n}: nightly +{new} (vec0 knn)",
                **measure(copy_knn, knn_limit=10**9)})
    out.append({"case": f"real {n}: nightly +{new} (scan)", **measure(copy_scan, knn_limit=1)})
    return out


def synthetic_case(work: Path, n: int, frac: float, rng: random.Random, *, knn: bool,
                   full: bool) -> list[dict]:
    import numpy as np

    from hippo import embed
    from hippo.embed.cache import ensure_store, to_blob
    from hippo.memory import brain
    from hippo.memory.records import NewMemory
    from hippo.store import connect

    db_path = work / f"synthetic-{n}.db"
    db = connect(db_path)
    ensure_store(db, "brain", embed.get("hash"))  # 384-d; vectors below are synthetic
    gen = np.random.default_rng(rng.randrange(2**32))
    t = time.perf_counter()
    stamp = "2026-01-01T00:00:00.000Z"
    for lo in range(0, n, 10_000):
        ids = range(lo + 1, min(n, lo + 10_000) + 1)
        vecs = gen.standard_normal((len(ids), 384)).astype("<f4")
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        with db.transaction():
            db.conn.executemany(
                "INSERT INTO memories(id, text, type, tier, project, author, created_at, "
                "updated_at, dedup_key, content_hash) VALUES (?, ?, 'fact', 'semantic', "
                "'bench', 'machine', ?, ?, ?, ?)",
                [(i, f"synthetic memory {i}", stamp, stamp, f"k{i}", f"h{i}") for i in ids])
            db.conn.executemany(
                "INSERT INTO memories_vec(memory_id, embedding, project, type, tier, created) "
                "VALUES (?, ?, 'bench', 'fact', 'semantic', 0)",
                [(i, to_blob(v)) for i, v in zip(ids, vecs)])
    with db.transaction():  # as if last night's run had seen all of it
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES "
                   "('consolidate.audit_watermark', '0'), ('consolidate.threshold', '0.93')")
    setup_s = time.perf_counter() - t
    new = max(1, int(n * frac))
    with db.transaction():
        for j in range(new):
            if j % 2 == 0:  # a near-duplicate of an old memory
                old = rng.randrange(1, n + 1)
                base = np.frombuffer(db.scalar("SELECT embedding FROM memories_vec WHERE "
                                               "memory_id = ?", (old,)), dtype="<f4")
                v = base + gen.standard_normal(384).astype("<f4") * 0.004
                text = f"synthetic memory {old}"  # same words: the statement does not change
            else:
                v = gen.standard_normal(384).astype("<f4")
                text = f"synthetic new memory {j}"
            v /= np.linalg.norm(v)
            brain.insert(db, NewMemory(text=text, type="fact", tier="semantic",
                                       project="bench", author="machine"), v, actor="bench")
    db.close()
    out = []
    copies = {"knn": snapshot(db_path, work / f"synthetic-{n}-knn.db") if knn else None,
              "full": snapshot(db_path, work / f"synthetic-{n}-full.db") if full else None}
    out.append({"case": f"synthetic {n}: nightly +{new} (auto)", **measure(db_path),
                "setup_insert_s": round(setup_s, 1)})
    if copies["knn"]:
        out.append({"case": f"synthetic {n}: nightly +{new} (vec0 knn)",
                    **measure(copies["knn"], knn_limit=10**9)})
    if copies["full"]:
        out.append({"case": f"synthetic {n}: --full", **measure(copies["full"], full=True)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", type=int, default=10_000, help="memories embedded with the "
                    "local model (0: skip)")
    ap.add_argument("--synthetic", type=int, nargs="*", default=[100_000],
                    help="sizes with synthetic vectors (none: skip)")
    ap.add_argument("--new", type=float, default=0.01, help="fraction of new memories")
    ap.add_argument("--synthetic-knn", action="store_true", help="also time forced vec0 KNN "
                    "on the synthetic sets (about 0.13 s per new memory at 100k)")
    ap.add_argument("--synthetic-full", action="store_true", help="also time --full on the "
                    "synthetic sets")
    ap.add_argument("--workdir", type=Path, help="keep the databases here")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--_run", help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--knn-limit", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._run:
        _run_child(args._run, args.full, args.knn_limit)
        return
    tmp = None if args.workdir else tempfile.TemporaryDirectory()
    work = args.workdir or Path(tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HIPPO_HOME", str(work))
    rng = random.Random(args.seed)
    results = []
    if args.real:
        results += real_case(work, args.real, args.new, rng)
    for n in args.synthetic:
        results += synthetic_case(work, n, args.new, rng, knn=args.synthetic_knn,
                                  full=args.synthetic_full)
    print(f"{'case':<40} {'strategy':>8} {'checked':>8} {'merged':>7} {'job s':>7} "
          f"{'process s':>9} {'peak RSS MB':>11}")
    for r in results:
        s = r["summary"]
        print(f"{r['case']:<40} {s['strategy']:>8} {s['checked']:>8} {s['merged']:>7} "
              f"{r['job_seconds']:>7.2f} {r['seconds']:>9.2f} {r['peak_rss_mb']:>11.1f}")
    print(json.dumps(results, indent=None, default=str), file=sys.stderr)
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
