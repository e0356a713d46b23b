"""`hippo mcp` latency on a 10k-memory store: a `search` tool call through the SDK's own
stdio client, the same search in-process, and `hippo search --json` as a cold process.

Usage: python bench/bench_mcp.py [--memories 10000] [--queries 30] [--cold 10]
                                 [--workdir DIR] [--base DIR [--runs 25]]

The store is bench/bench_search.py's (generated engineering notes, local embedder); with
`--workdir` it is kept for the next run. In one run:

1. Server: `python -m hippo mcp` started through `stdio_client`; the time until
   `initialize` is answered, then the first `search` after start (the model is still
   loading in the background), then `--queries` new questions (never embedded before)
   and the same questions again (their embeddings cached), each a `tools/call`.
2. In-process: `hippo.retrieve.pipeline.search` on one open Hippo with the model loaded,
   other new questions, then the same again; the model's load time is measured first.
3. Cold: `python -m hippo search --json` per question, new then repeated (`--cold` of them).

4. With `--base DIR` (another checkout, e.g. `git archive main | tar -x -C DIR`): cold
   `hippo --help` and a cached `hippo search --json` of this tree and that one, in
   alternating runs, CPU time (user+sys, steadier than wall time on a shared machine):
   the MCP SDK must cost the other commands nothing.

Targets (issue 18): a tool call's p50 within 1.5x in-process and under 50 ms; the first
search after start within the model's load time plus one in-process search.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import build_small, questions

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

PROJECT = "proj1"


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of `values`."""
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))], 1)


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 1), "p95": pct(values, 95),
            "n": len(values)}


def env_for(workdir: Path) -> dict[str, str]:
    env = {**os.environ, "HIPPO_HOME": str(workdir), "HIPPO_PROJECT": PROJECT,
           "HIPPO_NO_PROGRESS": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed hippo has its bytecode compiled
    return env


def server(db: Path, workdir: Path, new: list[str]) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {k: v for k, v in env_for(workdir).items() if k.startswith(("HIPPO_", "PYTHON"))}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "hippo", "--db", str(db), "mcp"], env=env)
    out: dict[str, Any] = {}
    errlog = open(os.devnull, "w")  # noqa: SIM115 - open for the whole run

    async def run() -> None:
        t0 = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            out["initialize_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            t = time.perf_counter()
            res = await session.call_tool("search", {"query": f"first {new[0]}"})
            out["first_search_ms"] = round((time.perf_counter() - t) * 1000, 1)
            out["first_search_after_start_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            assert not res.is_error, res.content[0].text
            for phase in ("new", "repeated"):
                times = []
                for q in new:
                    t = time.perf_counter()
                    res = await session.call_tool("search", {"query": q})
                    times.append((time.perf_counter() - t) * 1000)
                    assert not res.is_error, res.content[0].text
                out[phase] = summary(times)

    anyio.run(run)
    errlog.close()
    return out


def in_process(db: Path, workdir: Path, new: list[str]) -> dict[str, Any]:
    os.environ["HIPPO_HOME"] = str(workdir)
    os.environ["HIPPO_PROJECT"] = PROJECT
    import hippo
    from hippo.retrieve.pipeline import search

    out: dict[str, Any] = fresh(db, workdir)
    h = hippo.open(db)
    getattr(h.embedder("brain"), "_session", None)
    search(h, "warm the file cache")
    for phase in ("new", "repeated"):
        times = []
        for q in new:
            t = time.perf_counter()
            search(h, q)
            times.append((time.perf_counter() - t) * 1000)
        out[phase] = summary(times)
    h.close()
    return out


FRESH = """
import json, sys, time
import hippo
from hippo.retrieve.pipeline import search
h = hippo.open(sys.argv[1])
h.db
t = time.perf_counter()
getattr(h.embedder("brain"), "_session", None)  # what the server's warm-up loads
t1 = time.perf_counter()
search(h, sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"model_load_ms": round((t1 - t) * 1000, 1),
                  "first_search_ms": round((t2 - t1) * 1000, 1)}))
"""


def fresh(db: Path, workdir: Path) -> dict[str, Any]:
    """In a new process: the model's load time, then its first (new) search."""
    proc = subprocess.run([sys.executable, "-c", FRESH, str(db),
                           f"a first question {time.time()}"], env=env_for(workdir),
                          capture_output=True, text=True, check=True)
    return dict(json.loads(proc.stdout))


def cold(db: Path, workdir: Path, new: list[str]) -> dict[str, Any]:
    env = env_for(workdir)
    base = [sys.executable, "-m", "hippo", "--db", str(db), "search", "--json", "--"]
    out: dict[str, Any] = {}
    for phase in ("new", "repeated"):
        times = []
        for q in new:
            t = time.perf_counter()
            subprocess.run([*base, q], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            times.append((time.perf_counter() - t) * 1000)
        out[phase] = summary(times)
    return out


def base_compare(db: Path, workdir: Path, base: Path, runs: int) -> dict[str, Any]:
    """CPU ms of cold commands, this tree against `base`, alternating run by run."""
    env = env_for(workdir)
    trees = {"this": Path(__file__).resolve().parent.parent, "base": base.resolve()}
    cases = {"help": ["--help"],
             "search_cached": ["--db", str(db), "search", "--json", "--", "who owns the VPN?"]}
    cpu: dict[str, list[float]] = {f"{t}.{c}": [] for t in trees for c in cases}
    for i in range(runs + 1):  # the first round compiles bytecode and caches the query
        for tree, path in trees.items():
            for case, argv in cases.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                # -m hippo from the tree's directory imports that tree's hippo.
                subprocess.run([sys.executable, "-m", "hippo", *argv], cwd=path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if i:
                    cpu[f"{tree}.{case}"].append(
                        (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                        * 1000)
    return {k: round(statistics.median(v), 1) for k, v in cpu.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--workdir", type=Path, help="keep the database here between runs")
    ap.add_argument("--base", type=Path, help="compare cold CLI calls with this checkout")
    ap.add_argument("--runs", type=int, default=25, help="rounds of the --base comparison")
    args = ap.parse_args()
    if args.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="hippo-bench-mcp-")
        args.workdir = Path(tmp.name)
    args.workdir.mkdir(parents=True, exist_ok=True)
    os.environ["HIPPO_HOME"] = str(args.workdir)
    db = args.workdir / f"search-{args.memories}.db"
    if not db.exists():
        build_small(db, args.memories)
    stamp = time.strftime("%H%M%S")
    qs = questions(args.queries)
    # Each part gets questions no part has embedded before (the cache is in the database).
    result = {
        "memories": args.memories,
        "server": server(db, args.workdir, [f"{q} (mcp {stamp})" for q in qs]),
        "in_process": in_process(db, args.workdir, [f"{q} (lib {stamp})" for q in qs]),
        "cold": cold(db, args.workdir, [f"{q} (cold {stamp})" for q in qs[:args.cold]]),
    }
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]  # a shared machine shows
    result["cpus"] = os.cpu_count()
    s, p, c = result["server"], result["in_process"], result["cold"]
    print(f"{args.memories} memories; load average {result['load_average'][0]} on "
          f"{result['cpus']} cores")
    print(f"{'case':<34}{'new p50':>9}{'p95':>8}{'repeat p50':>12}{'p95':>8}")
    for name, part in (("search tool call (stdio client)", s), ("in-process search", p),
                       ("hippo search --json (cold)", c)):
        print(f"{name:<34}{part['new']['p50']:>9}{part['new']['p95']:>8}"
              f"{part['repeated']['p50']:>12}{part['repeated']['p95']:>8}")
    ratio = {k: round(s[k]["p50"] / p[k]["p50"], 2) for k in ("new", "repeated")}
    result["tool_over_in_process_p50"] = ratio
    print(f"tool call / in-process (p50): new {ratio['new']}x, repeated {ratio['repeated']}x"
          " (target <= 1.5x, and < 50 ms)")
    print(f"initialize answered after {s['initialize_ms']} ms; first search after start "
          f"{s['first_search_ms']} ms (a new process: model load {p['model_load_ms']} ms, "
          f"then its first search {p['first_search_ms']} ms; sum "
          f"{p['model_load_ms'] + p['first_search_ms']:.1f} ms)")
    if args.base:
        b = result["base"] = base_compare(db, args.workdir, args.base, args.runs)
        print(f"cold CPU ms (median of {args.runs}), this tree vs base: --help "
              f"{b['this.help']} vs {b['base.help']}; cached search {b['this.search_cached']}"
              f" vs {b['base.search_cached']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
