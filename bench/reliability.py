"""Every figure of docs/reliability.md, from one command.

Usage: python bench/reliability.py [--seconds 30] [--embedder local] [--kills 10]
                                   [--fuzz-scale 10] [--seed 8] [--quick]

1. Concurrency, cold processes (what agents and cron start): 4 `hippo search` loops, one
   ingest+extract loop fed new transcripts, one consolidate loop and one add loop on one
   database for --seconds; the same 4 searchers alone give the latency baseline.
2. Concurrency, warm workers (the CLI entry point called in a loop, so calls collide far
   more often), with the default 5 s busy timeout and with 1 ms (exit 75 paths).
3. Crash safety: --kills SIGKILLs at seeded random moments of ingest, extract,
   consolidate and add; `hippo doctor` after each; the final run compared with a run that
   was never killed.
4. Fuzzing: tests/reliability/test_fuzz.py with --fuzz-scale times its examples, plus the
   corpus in tests/fuzz_corpus/.
5. Limits, full and read-only disks, security: tests/reliability/test_limits.py,
   test_security.py, test_doctor_more.py.

Prints a Markdown table and writes everything to bench/out/reliability.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.reliability.kills import COMMANDS, kill_test
from tests.reliability.load import COLD_ROLES, WARM_ROLES, Load, load_run

LATE_OFF = "[search]\nlate_pool = 0\n"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def concurrency(work: Path, seconds: float, embedder: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode, suffix in (("cold", ""), ("warm", "-warm")):
        # The same 4 searchers alone first (the latency baseline), then the mixed load.
        alone = Load(work / f"baseline{suffix}", seconds=seconds, embedder=embedder)
        alone.seed()
        (alone.cold if mode == "cold" else alone.warm)(roles=("search",) * 4)
        key = f"search_alone{suffix.replace('-', '_')}"
        out[key] = alone.check().figures()
        log(f"{'warm ' if mode == 'warm' else ''}searchers alone: {out[key]}")
        out[mode] = load_run(work / mode, seconds=seconds, mode=mode, embedder=embedder
                             ).figures()
        log(f"{mode} load: {out[mode]}")
    out["warm_1ms"] = load_run(work / "warm1", seconds=seconds, mode="warm",
                               embedder=embedder, busy_timeout_ms=1).figures()
    log(f"warm load, 1 ms busy timeout: {out['warm_1ms']}")
    # The same loads without the late-interaction stage, to show what it costs under writes.
    for mode in ("cold", "warm"):
        out[f"{mode}_late_off"] = load_run(work / f"{mode}-late-off", seconds=seconds,
                                           mode=mode, embedder=embedder,
                                           config=LATE_OFF).figures()
        log(f"{mode} load, [search] late_pool = 0: {out[f'{mode}_late_off']}")
    return out


def kills(work: Path, n: int, seed: int, embedder: str) -> dict[str, Any]:
    out = {}
    for command in COMMANDS:
        rep = kill_test(work / command, command, kills=n, seed=seed, size=30,
                        embedder=embedder)
        out[command] = {**rep.figures(), "difference": rep.difference,
                        "doctor": rep.doctor_failures, "partial": rep.partial_writes,
                        "progress": rep.progress}
        log(f"kills, {command}: {rep.figures()}")
    return out


def pytest(files: list[str], env: dict[str, str]) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p",
                        "no:cacheprovider", "--hypothesis-show-statistics", *files], cwd=REPO,
                       env=env, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout + p.stderr


def counts(output: str) -> dict[str, int]:
    found = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error)", output)}
    return {k: found.get(k, 0) for k in ("passed", "failed", "skipped", "error")}


def fuzz(scale: float) -> dict[str, Any]:
    env = {**os.environ, "RELIABILITY_FUZZ_SCALE": str(scale)}
    rc, output = pytest(["tests/reliability/test_fuzz.py"], env)
    examples = sum(int(n) for n in re.findall(r"(\d+) passing", output))
    corpus = sum(1 for p in (REPO / "tests" / "fuzz_corpus").rglob("*")
                 if p.is_file() and p.name != "README.md")
    queries = len(json.loads((REPO / "tests/fuzz_corpus/queries.json").read_text()))
    out = {"ok": rc == 0, "examples": examples, "corpus_files": corpus,
           "corpus_queries": queries, **counts(output)}
    if rc:
        out["output"] = output[-4000:]
    log(f"fuzz: {out}")
    return out


def limits_and_security() -> dict[str, Any]:
    rc, output = pytest([f"tests/reliability/{name}.py" for name in (
        "test_limits", "test_security", "test_doctor_more")], dict(os.environ))
    out = {"ok": rc == 0, **counts(output)}
    if rc or out["skipped"]:
        out["output"] = output[-4000:]
    log(f"limits and security: {out}")
    return out


def _ops(f: dict[str, Any]) -> str:
    per_kind = ", ".join(f"{k} {v.get('ok', 0)}" for k, v in f["ops"].items())
    return f"{f['completed']} ({per_kind})"


def _ms(f: dict[str, Any]) -> str:
    return f"{f['search_p50_ms']} / {f['search_p95_ms']} ms"


def _lost(f: dict[str, Any]) -> str:
    adds = f"{f['adds_missing']} of {f['adds_reported']} adds"
    lines = f"{f['lines_missing']} of {f['transcript_lines']} transcript lines"
    return f"{adds}, {lines}"


def _load_rows(title: str, f: dict[str, Any], alone: dict[str, Any] | None) -> list[tuple]:
    baseline = f" (4 searchers alone: {_ms(alone)})" if alone else ""
    return [
        (title, f"{_ops(f)} operations completed"),
        ("  failures / busy exits (75, one line)", f"{f['failures']} / {f['busy_exit_75']}"),
        ("  search p50 / p95 under write load", _ms(f) + baseline),
        ("  lost", _lost(f)),
    ]


def _short_row(title: str, f: dict[str, Any]) -> tuple[str, str]:
    return (title, (f"{f['completed']} operations, {f['failures']} failures, "
                   f"{f['busy_exit_75']} busy exits (75), search {_ms(f)}, lost: {_lost(f)}"))


def table(r: dict[str, Any]) -> str:
    con, k, fz, ls = r["concurrency"], r["kills"], r["fuzz"], r["limits_security"]
    secs = f"{con['cold']['seconds']:g} s"
    rows = _load_rows(f"Cold processes, {len(COLD_ROLES)} at once, {secs}", con["cold"],
                      con["search_alone"])
    rows.append(_short_row("  same, `[search] late_pool = 0`", con["cold_late_off"]))
    rows += _load_rows(f"Warm workers, {len(WARM_ROLES)} at once, {secs}", con["warm"],
                       con["search_alone_warm"])
    rows.append(_short_row("  same, `[search] late_pool = 0`", con["warm_late_off"]))
    rows.append(_short_row("Warm workers, 1 ms busy timeout", con["warm_1ms"]))
    survived = ", ".join(f"{cmd} {k[cmd]['kills']} ({k[cmd]['before_done']} before its work "
                         "was done)" for cmd in k)
    ok = {
        "doctor": not any(k[cmd]["doctor_failures"] for cmd in k),
        "converged": all(k[cmd]["converged"] for cmd in k),
        "atomic": not any(k[cmd]["partial_writes"] for cmd in k),
    }
    corpus = f"{fz['corpus_files']} files + {fz['corpus_queries']} queries"
    rows += [
        ("SIGKILLs survived, per command", survived),
        ("  `hippo doctor` after every kill", "consistent" if ok["doctor"] else "FAILED"),
        ("  final run vs a run never killed", "identical" if ok["converged"] else "DIFFERENT"),
        ("  `add` batch: all or nothing", "never partial" if ok["atomic"] else "PARTIAL"),
        ("Fuzz examples run (hypothesis)", f"{fz['examples']}, {fz['failed']} failing"),
        ("  worst-case corpus replayed", corpus),
        ("Limits, full / read-only disk, security tests",
         f"{ls['passed']} passed, {ls['failed']} failed, {ls['skipped']} skipped"),
    ]
    m, a = r["machine"], r["args"]
    out = ["| Reliability | measured |", "|---|---|"]
    out += [f"| {x} | {y} |" for x, y in rows]
    where = f"{m['cpus']} CPUs, Python {m['python']}, SQLite {m['sqlite']}"
    out += ["", (f"Measured on {where}, embedder `{a['embedder']}`, seed {a['seed']}: "
                f"`python bench/reliability.py{a['argv']}`.")]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30, help="load duration of each run")
    ap.add_argument("--embedder", default="local", help="local (default) or hash")
    ap.add_argument("--kills", type=int, default=10, help="SIGKILLs per command")
    ap.add_argument("--fuzz-scale", type=float, default=10,
                    help="times the examples of the test suite")
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 5 s loads, 2 kills, fuzz scale 1, hash embedder")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.kills, args.fuzz_scale, args.embedder = 5, 2, 1, "hash"
    import apsw

    started = time.perf_counter()
    results: dict[str, Any] = {
        "args": {**vars(args), "argv": "".join(f" {a}" for a in sys.argv[1:])},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "sqlite": apsw.sqlite_lib_version(), "platform": platform.platform()},
    }
    with tempfile.TemporaryDirectory(prefix="hippo-reliability-") as tmp:
        work = Path(tmp)
        results["concurrency"] = concurrency(work / "load", args.seconds, args.embedder)
        results["kills"] = kills(work / "kills", args.kills, args.seed, args.embedder)
    results["fuzz"] = fuzz(args.fuzz_scale)
    results["limits_security"] = limits_and_security()
    results["seconds"] = round(time.perf_counter() - started, 1)
    out = REPO / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "reliability.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(table(results))
    log(f"wrote {out / 'reliability.json'} in {results['seconds']} s")


if __name__ == "__main__":
    main()
