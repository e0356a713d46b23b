"""Ingest throughput (messages/s, chunks/s) and the cost of a no-change re-run.

Usage: python bench/bench_ingest.py [--embedder local] [--files 1000] [--locomo FILE]
- the largest shared transcript (../shared/data/transcripts), with the chosen embedder;
- every LoCoMo dev conversation written as a generic JSONL transcript;
- a no-change re-run of `hippo ingest` over N unchanged files (cold process, median of 5);
- the largest transcript again with the model on one thread and on the default (every
  core, at most 4), alternating, two runs each (medians).
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

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"


def ingest(db: Path, paths: list[Path], env: dict[str, str], *extra: str) -> tuple[float, dict]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "ingest", *map(str, paths),
                          "--idle-minutes", "0", *extra], env=env, capture_output=True, text=True,
                         check=False)
    elapsed = time.perf_counter() - t
    if out.returncode not in (0, 3):
        raise SystemExit(out.stderr)
    return elapsed, json.loads(out.stdout.strip().splitlines()[-1])


def db_bytes(db: Path) -> int:
    """The database's size on disk, its WAL included."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def locomo_transcripts(data: Path, out: Path) -> list[Path]:
    files = []
    for sample in json.loads(data.read_text()):
        conv = sample["conversation"]
        path = out / f"{sample['sample_id']}.jsonl"
        with path.open("w") as fh:
            n = 1
            while f"session_{n}" in conv:
                for turn in conv[f"session_{n}"]:
                    role = "user" if turn["speaker"] == conv["speaker_a"] else "assistant"
                    fh.write(json.dumps({"role": role, "content": f"{turn['speaker']}: {turn['text']}"}) + "\n")
                n += 1
        files.append(path)
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--locomo", type=Path, default=SHARED / "locomo" / "locomo10-dev.json")
    args = ap.parse_args()
    results: dict[str, object] = {"embedder": args.embedder}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        env = {**os.environ, "HIPPO_HOME": str(t / "home"), "HIPPO_EMBEDDER": args.embedder,
               "HIPPO_NO_PROGRESS": "1"}
        transcripts = sorted((SHARED / "transcripts").rglob("*.json*"), key=lambda p: p.stat().st_size)
        if transcripts:
            big = transcripts[-1]
            copy = t / big.name
            shutil.copy(big, copy)
            secs, s = ingest(t / "big.db", [copy], env)
            results["largest_transcript"] = {"file": big.name, "bytes": big.stat().st_size,
                                             "seconds": round(secs, 2), "messages": s["messages"],
                                             "chunks": s["chunks"],
                                             "messages_per_s": round(s["messages"] / secs, 1),
                                             "chunks_per_s": round(s["chunks"] / secs, 1),
                                             "db_bytes": db_bytes(t / "big.db")}
            print("largest transcript:", results["largest_transcript"], flush=True)
            # The model's thread count side by side: one thread (the bulk default on 2 cores
            # until December 2026) against the default (every core, at most 4), alternating.
            runs: dict[str, list[float]] = {"1": [], "default": []}
            for n in range(2):
                for threads in ("1", "default"):
                    run_env = {**env, "HIPPO_THREADS": "" if threads == "default" else threads}
                    runs[threads].append(ingest(t / f"threads-{threads}-{n}.db", [copy], run_env)[0])
            results["threads_side_by_side"] = {
                "file": big.name, "one_thread_s": round(statistics.median(runs["1"]), 2),
                "default_s": round(statistics.median(runs["default"]), 2),
                "default_threads": min(4, os.cpu_count() or 2)}
            print("threads, side by side:", results["threads_side_by_side"], flush=True)
        if args.locomo.exists():
            d = t / "locomo"
            d.mkdir()
            files = locomo_transcripts(args.locomo, d)
            secs, s = ingest(t / "locomo.db", files, env, "--format", "generic-jsonl")
            results["locomo"] = {"files": len(files), "seconds": round(secs, 2),
                                 "messages": s["messages"], "chunks": s["chunks"],
                                 "messages_per_s": round(s["messages"] / secs, 1),
                                 "chunks_per_s": round(s["chunks"] / secs, 1),
                                 "db_bytes": db_bytes(t / "locomo.db")}
            print("locomo:", results["locomo"], flush=True)
        many = t / "many"
        many.mkdir()
        for i in range(args.files):
            (many / f"s{i:05d}.jsonl").write_text(
                json.dumps({"role": "user", "content": f"session {i} says hello"}) + "\n")
        hash_env = {**env, "HIPPO_EMBEDDER": "hash"}
        ingest(t / "many.db", [many], hash_env)
        times = [ingest(t / "many.db", [many], hash_env)[0] for _ in range(5)]
        results["rerun_unchanged"] = {"files": args.files, "median_s": round(statistics.median(times), 3),
                                      "budget_s": 1.0}
        print("no-change re-run:", results["rerun_unchanged"], flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
