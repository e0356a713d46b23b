"""Cold-process start-up medians: `hippo --help`, `hippo stats`, and one local query embedding.

Usage: python bench/bench_cli.py [--runs 7]
Every run is a new Python process, as for an agent, cron or Tab completion. The floor
(`python -c pass`) and `import typer` are measured in the same run, so a loaded machine
shows as a high floor rather than as a slow hippo. PYTHONDONTWRITEBYTECODE is removed
from the environment: a real install has its bytecode compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

EMBED_ONE = (
    "from hippo.embed import get; import time; t=time.perf_counter(); "
    "get('local').embed_batch(['how do we deploy the staging cluster?'])"
)


def cold(cmd: list[str], env: dict[str, str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HIPPO_HOME": tmp, "HIPPO_NO_PROGRESS": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        db = str(Path(tmp) / "bench.db")
        hippo = [sys.executable, "-m", "hippo"]
        subprocess.run([*hippo, "--db", db, "add", "warm-up memory"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        cases = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "python -c 'import typer'": [sys.executable, "-c", "import typer"],
            "hippo --help": [*hippo, "--help"],
            "hippo stats --json": [*hippo, "--db", db, "stats", "--json"],
            "embed one query (local, cold)": [sys.executable, "-c", EMBED_ONE],
        }
        budgets = {"hippo --help": 200, "hippo stats --json": 250}
        results = {}
        print(f"{'case':<32} {'median ms':>10} {'min':>8} {'max':>8}  budget")
        for name, cmd in cases.items():
            cold(cmd, env, 1)  # warm the OS file cache, not the process
            times = cold(cmd, env, args.runs)
            med = statistics.median(times)
            results[name] = round(med, 1)
            budget = budgets.get(name)
            verdict = "" if budget is None else f"{budget} ms {'ok' if med <= budget else 'OVER'}"
            print(f"{name:<32} {med:>10.1f} {min(times):>8.1f} {max(times):>8.1f}  {verdict}")
        print(json.dumps({"runs": args.runs, "median_ms": results}))


if __name__ == "__main__":
    main()
