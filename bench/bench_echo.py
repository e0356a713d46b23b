"""Cold `hippo echo` over real transcripts: token matrices cached at ingest, or not.

Usage: python bench/bench_echo.py [--transcripts DIR] [--queries 8]

The shared coding-agent transcripts (../shared/data/transcripts) are ingested once with
the local model. Two copies of the database are then searched, alternating, each query
a new one run as a fresh `python -m hippo echo QUERY --json` process (what an agent or a
person starts):

- "cached at ingest": the database as `hippo ingest` leaves it (every chunk's token
  matrix cached in the pass that embedded it);
- "encoded at search": the same with the token matrices deleted, as an archive ingested
  before December 2026 was. Each search encodes the candidates it meets, so its cost
  falls as the cache fills: the per-query figures show that.

Prints each query's wall time for both, the medians, the database sizes and the ingest
time, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import db_bytes

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

REPO = Path(__file__).resolve().parent.parent
TRANSCRIPTS = REPO.parent / "shared" / "data" / "transcripts"
QUERIES = [
    "how was the file operations test done",
    "which plugin changes were made for reasoning",
    "what does the session adapter parse",
    "why did the windows tests fail",
    "where is the metrics delta generated",
    "what command lists available tools",
    "how are hooks resolved at runtime",
    "which files were modified in the last commit",
    "what is the default context compaction threshold",
    "how do I run the focused test file",
]


def hippo(db: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), *args], env=env,
                         capture_output=True, text=True, check=True)
    return time.perf_counter() - t, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    ap.add_argument("--queries", type=int, default=8)
    args = ap.parse_args()
    import apsw

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        env = {**os.environ, "HIPPO_HOME": str(t / "home"), "HIPPO_NO_PROGRESS": "1",
               "HIPPO_EMBEDDER": "local"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cached, encoded = t / "cached.db", t / "encoded.db"
        ingest_s, out = hippo(cached, env, "ingest", str(args.transcripts), "--idle-minutes", "0")
        summary = json.loads(out.strip().splitlines()[-1])
        conn = apsw.Connection(str(cached))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        shutil.copy(cached, encoded)
        conn = apsw.Connection(str(encoded))
        conn.execute("DELETE FROM embed_cache WHERE model LIKE '%#tokens%'")
        conn.execute("VACUUM")
        conn.close()
        sizes = {"cached": db_bytes(cached), "encoded": db_bytes(encoded)}
        print(f"ingested {summary['files']} files, {summary['chunks']} chunks in {ingest_s:.1f} s; "
              f"database {sizes['cached'] / 1e6:.1f} MB with token matrices, "
              f"{sizes['encoded'] / 1e6:.1f} MB without", flush=True)
        times: dict[str, list[float]] = {"cached at ingest": [], "encoded at search": []}
        for n, query in enumerate(QUERIES[: args.queries]):
            order = [("cached at ingest", cached), ("encoded at search", encoded)]
            for name, db in order if n % 2 == 0 else order[::-1]:
                times[name].append(hippo(db, env, "echo", query, "--json")[0])
            print(f"  {times['cached at ingest'][-1]:6.2f} s  {times['encoded at search'][-1]:6.2f} s"
                  f"  {query}", flush=True)
        med = {k: round(statistics.median(v), 2) for k, v in times.items()}
        print(f"median: cached at ingest {med['cached at ingest']} s, "
              f"encoded at search {med['encoded at search']} s")
        print(json.dumps({"files": summary["files"], "chunks": summary["chunks"],
                          "ingest_s": round(ingest_s, 2), "db_bytes": sizes,
                          "median_s": med,
                          "per_query_s": {k: [round(x, 2) for x in v] for k, v in times.items()}}))


if __name__ == "__main__":
    main()
