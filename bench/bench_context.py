"""Cold-process medians of `hippo context` (the rule floor) on a database with 200 rules.

Usage: python bench/bench_context.py [--runs 7] [--budget-ms 250]
200 rules across projects A, B and C (half human, half machine) plus 20 global ones.
Every run is a new Python process, as at an agent's session start. Wall time is what
an agent waits; CPU time (user+sys) is shown too, as it barely moves on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

TOPICS = ("tests", "migrations", "logging", "secrets", "style", "deploys", "reviews", "docs")


def rules(n: int = 200, n_global: int = 20) -> list[dict[str, object]]:
    """Deterministic rules: n across A/B/C (half human, half machine), then n_global global."""
    out: list[dict[str, object]] = []
    for i in range(n + n_global):
        topic = TOPICS[i % len(TOPICS)]
        out.append({
            "text": f"Rule {i}: always check {topic} before you touch module {i % 17}; "
                    f"ask first when {topic} and module {i % 13} disagree.",
            "type": "rule",
            "project": None if i >= n else "ABC"[i % 3],
            "author": "human" if i % 2 == 0 else "machine",
            "importance": round(0.3 + (i * 37 % 70) / 100, 2),
            "tags": [topic],
        })
    return out


def cold(cmd: list[str], env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user+sys) milliseconds of `runs` fresh processes."""
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        wall.append((time.perf_counter() - t) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--budget-ms", type=float, default=250.0)
    args = ap.parse_args()
    runs = max(args.runs, 5)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HIPPO_HOME": tmp, "HIPPO_NO_PROGRESS": "1"}
        env.pop("HIPPO_PROJECT", None)
        # An installed hippo has its bytecode compiled (pip does it); without this the
        # bench would time Python compiling every module from source at each start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        db = str(Path(tmp) / "bench.db")
        hippo = [sys.executable, "-m", "hippo", "--db", db]
        lines = "".join(json.dumps(r) + "\n" for r in rules())
        subprocess.run([*hippo, "--embedder", "hash", "add", "-"], input=lines.encode(),
                       env=env, check=True, stdout=subprocess.DEVNULL)
        cases = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "hippo --version": ([sys.executable, "-m", "hippo", "--version"], None),
            "hippo context --project A": ([*hippo, "context", "--project", "A"], args.budget_ms),
            "hippo context -p A --json": ([*hippo, "context", "-p", "A", "--json"], None),
            "hippo context -p A --route": ([*hippo, "context", "-p", "A", "--route"], None),
        }
        results, cpus = {}, {}
        print(f"{'case':<28} {'median ms':>9} {'min':>7} {'max':>7} {'cpu ms':>7}  budget")
        for name, (cmd, budget) in cases.items():
            cold(cmd, env, 1)  # warm the OS file cache, not the process
            times, cpu = cold(cmd, env, runs)
            med = statistics.median(times)
            results[name] = round(med, 1)
            cpus[name] = round(statistics.median(cpu), 1)
            verdict = "" if budget is None else f"{budget:.0f} ms {'ok' if med <= budget else 'OVER'}"
            print(f"{name:<28} {med:>9.1f} {min(times):>7.1f} {max(times):>7.1f} "
                  f"{cpus[name]:>7.1f}  {verdict}")
        out = subprocess.run([*hippo, "context", "--project", "A"], env=env,
                             capture_output=True, check=True)
        print(json.dumps({"runs": runs, "rules": 220, "median_ms": results,
                          "median_cpu_ms": cpus, "load_avg_1m": round(os.getloadavg()[0], 2),
                          "budget_ms": args.budget_ms,
                          "ok": results["hippo context --project A"] <= args.budget_ms,
                          "stderr": out.stderr.decode().strip()}))


if __name__ == "__main__":
    main()
