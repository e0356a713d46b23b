"""CPU time of one cold hippo command in two source trees, run in alternating pairs.

Usage: python bench/bench_pair.py BASE_TREE NEW_TREE [--pairs 40] [-- ARGS...]
Each tree needs its own venv (`TREE/.venv`). ARGS default to a repeated Brain search
(`search --json "deploy staging cluster"`); give `--db` and set HIPPO_HOME yourself to
point both at one store (e.g. bench_search.py's `--workdir`). The medians of wall time on
a shared machine move by more between rounds than a change of a few percent; the CPU time
(user+sys, from the children's rusage) of pairs run back to back, in alternating order, is
steadier. Prints each tree's median and the median of the per-pair differences.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

DEFAULT_ARGS = ["search", "--json", "deploy staging cluster"]


def cpu_ms(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def main() -> None:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--pairs", type=int, default=40)
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    env = {**os.environ, "HIPPO_NO_PROGRESS": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a real install has its bytecode compiled
    trees = {"base": args.base.resolve(), "new": args.new.resolve()}
    cmds = {k: [str(t / ".venv" / "bin" / "python"), "-m", "hippo", *(rest or DEFAULT_ARGS)]
            for k, t in trees.items()}
    for k, tree in trees.items():  # compile bytecode, warm the page cache and the caches
        cpu_ms(cmds[k], tree, env)
    times: dict[str, list[float]] = {k: [] for k in trees}
    for i in range(args.pairs):
        for k in (("base", "new") if i % 2 == 0 else ("new", "base")):
            times[k].append(cpu_ms(cmds[k], trees[k], env))
    diffs = [n - b for b, n in zip(times["base"], times["new"])]
    for k, v in times.items():
        print(f"{k:<5} {statistics.median(v):7.1f} ms cpu (median of {len(v)}; min {min(v):.1f})")
    print(f"new - base, per pair: median {statistics.median(diffs):+.1f} ms")


if __name__ == "__main__":
    main()
