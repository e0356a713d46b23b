"""Cold calls of two hippo installs side by side: is this tree any slower without a server?

Usage: python bench/bench_cold_ab.py --base OTHER_VENV/bin/python [--runs 21] [--workdir DIR]

Both installs answer the same calls on one store of 10k memories (the local embedder, built
by the base install, so an older base can read it; this tree reads it unmigrated), as new
processes, interleaved (which goes first alternates): `search --json` with a new and a
repeated query, and the prompt hook. Serving is on, with no server running and
`[serve] auto_start = false`: what a call pays for looking for one. To compare with the
tree before the warm server: `git worktree add /tmp/base 25f58de && python -m venv
/tmp/base/.venv && /tmp/base/.venv/bin/pip install -e /tmp/base`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import questions

SERVICES = ("billing", "auth", "search", "cdn", "export", "mobile")
DOES = ("retries failed requests", "pages on-call", "caches results", "times out")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", required=True, help="the other install's python")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="hippo-ab-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "ab.db"
    trees = {"base": args.base, "this": sys.executable}
    env = {**os.environ, "HIPPO_HOME": str(work), "HIPPO_PROJECT": "proj1",
           "HIPPO_NO_PROGRESS": "1",
           "XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix="hab-", dir="/tmp")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("HIPPO_SERVE", None)
    (work / "config.toml").write_text("[serve]\nauto_start = false\n")
    if not db.exists():
        rng = random.Random(5)
        lines = "".join(json.dumps({"text": f"note {i}: the {rng.choice(SERVICES)} service "
                                    f"{rng.choice(DOES)} ({i})", "type": "fact"}) + "\n"
                        for i in range(10_000))
        subprocess.run([args.base, "-m", "hippo", "--db", str(db), "add", "-"],
                       input=lines.encode(), env=env, check=True, capture_output=True)

    def timed(py: str, call: list[str], stdin: bytes = b"") -> float:
        t = time.perf_counter()
        out = subprocess.run([py, "-m", "hippo", "--db", str(db), *call], input=stdin, env=env,
                             capture_output=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{py} {call}: {out.stderr.decode()[-300:]}")
        return (time.perf_counter() - t) * 1000

    repeated = ["search", "--json", "the billing service retries"]
    for py in trees.values():
        timed(py, repeated)  # its embedding cached, the file in the OS cache
    times: dict[str, dict[str, list[float]]] = {n: {"new": [], "repeated": [], "hook": []}
                                                for n in trees}
    floor = []
    stamp = time.strftime("%H%M%S")
    for i in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floor.append((time.perf_counter() - t) * 1000)
        for name, py in (list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]):
            q = f"{questions(50)[i % 50]} {stamp} {i} {name}"
            times[name]["new"].append(timed(py, ["search", "--json", q]))
            times[name]["repeated"].append(timed(py, repeated))
            prompt = json.dumps({"hook_event_name": "UserPromptSubmit",
                                 "prompt": f"who owns the auth service {stamp} {i} {name}"})
            times[name]["hook"].append(timed(py, ["hook", "claude-code", "prompt"],
                                             prompt.encode()))
        print(f"  round {i + 1}/{args.runs}", file=sys.stderr, end="\r")
    print(f"\nmedian ms of {args.runs}   new query  repeated  prompt hook   "
          f"(python -c pass {statistics.median(floor):.1f})")
    for name, cases in times.items():
        row = "  ".join(f"{statistics.median(v):>9.1f}" for v in cases.values())
        print(f"{name:<18} {row}")


if __name__ == "__main__":
    main()
