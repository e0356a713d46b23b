"""The figures of docs/reliability.md, "The database file".

Usage: python bench/dbfiles.py [--runs 5] [--busy-ms 30000] [--memories 300]

1. Reads under a held write lock: another process holds `BEGIN IMMEDIATE` on the database
   while the prompt hook, `search` and `list` run as cold processes, each with a new query
   (so each would write its query embedding to the cache), with HIPPO_BUSY_TIMEOUT_MS set
   to --busy-ms; the same calls without the lock give the baseline.
2. Salvage: --memories memories added in three batches, one leaf page of the memories
   table garbled; what `hippo export --salvage` and `hippo doctor --fix` get back.

Prints one line per figure; nothing here asserts a time (tests/reliability/test_dbfiles.py
holds the properties).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import orjson

from tests.reliability.harness import env_for, run
from tests.reliability.test_dbfiles import HOLDER, _memory_leaf, batch


def timed(db: Path, args: list[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    t = time.perf_counter()
    op = run(db, *args, env=env, input=stdin)
    took = time.perf_counter() - t
    if op.rc != 0 or "busy" in op.stderr:
        raise SystemExit(f"{args[0]} failed: {op.rc} {op.stderr}")
    return took


def calls(db: Path, env: dict[str, str], runs: int, tag: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"hook": [], "search": [], "list": []}
    for i in range(runs):
        prompt = orjson.dumps({"hook_event_name": "UserPromptSubmit",
                               "prompt": f"how do staging deploys run {tag} {i}"})
        out["hook"].append(timed(db, ["hook", "claude-code", "--min-score", "0"], env, prompt))
        out["search"].append(timed(db, ["search", "--json", f"staging deploys {tag} {i}"], env))
        out["list"].append(timed(db, ["list", "--json"], env))
    return out


def locked(tmp: Path, runs: int, busy_ms: int) -> None:
    home = tmp / "home"
    home.mkdir()
    db = tmp / "hippo.db"
    env = env_for(home, HIPPO_BUSY_TIMEOUT_MS=str(busy_ms))
    assert run(db, "add", "Staging deploys run make stage from deploy/", env=env).rc == 0
    free = calls(db, env, runs, "free")
    ready, release = tmp / "ready", tmp / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(ready), str(release)],
                              stdout=subprocess.PIPE, text=True)
    while not ready.exists():
        time.sleep(0.01)
    try:
        held = calls(db, env, runs, "held")
    finally:
        release.touch()
        holder.wait()
    assert holder.stdout is not None
    print(f"lock holder: {holder.stdout.read().strip()} (it gives up after 40 s)")
    for name in free:
        print(f"{name:7s} median {statistics.median(free[name]):.2f} s free, "
              f"{statistics.median(held[name]):.2f} s (max {max(held[name]):.2f}) while "
              f"another process held the write lock, busy timeout {busy_ms} ms, {runs} runs")


def salvaged(tmp: Path, memories: int) -> None:
    home = tmp / "home2"
    home.mkdir()
    db = tmp / "salvage.db"
    env = env_for(home)
    third = memories // 3
    for start in (0, third, 2 * third):
        assert run(db, "add", "-", env=env, input=batch(start, third).encode()).rc == 0
    total = len(run(db, "export", env=env).lines)
    page, size = _memory_leaf(db)
    with db.open("r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xde\xad\xbe\xef" * (size // 4))
    plain = run(db, "export", env=env)
    salvage = run(db, "export", "--salvage", env=env)
    fix = run(db, "doctor", "--fix", env=env)
    after = len(run(db, "export", env=env).lines)
    doctor = run(db, "doctor", env=env).rc
    print(f"salvage: {total} memories, page {page} garbled: plain export exit {plain.rc} "
          f"after {len(plain.lines)} rows; export --salvage exit {salvage.rc}, "
          f"{len(salvage.lines)} rows; doctor --fix exit {fix.rc}, {after} memories in the "
          f"new file, doctor then exits {doctor}")
    for line in salvage.stderr.splitlines():
        print(f"  {line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--busy-ms", type=int, default=30000)
    ap.add_argument("--memories", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        locked(Path(tmp), args.runs, args.busy_ms)
        salvaged(Path(tmp), args.memories)


if __name__ == "__main__":
    main()
