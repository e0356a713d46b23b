"""What a warm server (`hippo serve`) saves each call: cold processes with and without one.

Usage: python bench/bench_warm.py [--runs 15] [--memories 10000] [--workdir DIR]

A store of --memories generated engineering notes (the local embedder, as bench_search.py
builds it) plus one real Claude Code transcript in Echo. Each case runs as a new
`python -m hippo ...` process, as an agent or a hook runs it, once with HIPPO_SERVE=off
(the in-process path, no server looked for), once with serving on but no server to find
("none up": what looking costs a call), and once with a server running, the three adjacent
in every round (which goes first rotates), and `python -c pass` in the same rounds as the
floor:

- `search --json`, a new query (its embedding is not cached) and a repeated one;
- `hook claude-code prompt`, a new prompt on stdin;
- `echo`, a new query.

Every served call is checked to have been answered by the server (its call count) with
the same stdout as the in-process call. The acceptance (issue 19): a new query through
`search --json` and through the prompt hook at most floor + 60 ms median with a server.
Prints a table and the server's resident memory (RSS), writes bench/out/warm.json.
`--workdir` keeps the store between runs.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_search import build_small, questions

TRANSCRIPT = (REPO.parent / "shared" / "data" / "transcripts" / "claude-code-sessions"
              / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
ECHO_QUERIES = ["how was the file operations test done", "what does the session adapter parse",
                "why did the windows tests fail", "where is the metrics delta generated",
                "how are hooks resolved at runtime", "which plugin changes were made"]


def build(workdir: Path, n: int, env: dict[str, str]) -> Path:
    db = workdir / f"warm-{n}.db"
    if not db.exists():
        build_small(db, n)
        if TRANSCRIPT.exists():
            subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "ingest",
                            str(TRANSCRIPT), "--idle-minutes", "0"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from hippo.store import connect

    connect(db).close()  # a store kept from an older hippo: its schema steps, as a write's
    return db


def timed(cmd: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, bytes]:
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, input=stdin, capture_output=True, check=False)
    took = (time.perf_counter() - t) * 1000
    if out.returncode != 0:
        raise SystemExit(f"{cmd[3:]} exited {out.returncode}: {out.stderr.decode()[-400:]}")
    return took, out.stdout


def server_status(db: Path, env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "serve", "--status",
                          "--json"], env=env, capture_output=True, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def served_calls(db: Path, env: dict[str, str]) -> int:
    return int(server_status(db, env).get("calls", -1))  # type: ignore[call-overload]


def cases(db: Path, stamp: str, i: int, tag: str) -> dict[str, tuple[list[str], bytes]]:
    hippo = [sys.executable, "-m", "hippo", "--db", str(db)]
    q = questions(200, tag=stamp)[i % 200]
    again = questions(1, seed=11)[0]  # the warm-up's: its embedding is cached
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "bench",
                         "prompt": f"{questions(200, seed=7)[i % 200]} ({stamp} {i} {tag})"})
    return {
        "search --json, new query": ([*hippo, "search", "--json", "--", f"{q} {i} {tag}"], b""),
        "search --json, repeated query": ([*hippo, "search", "--json", "--", again], b""),
        "hook claude-code prompt": ([*hippo, "hook", "claude-code", "prompt", "--min-score",
                                     "0"], prompt.encode()),
        "echo, new query": ([*hippo, "echo", "--", f"{ECHO_QUERIES[i % 6]} {stamp} {i} {tag}"],
                            b""),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hippo-warm-"))
    workdir.mkdir(parents=True, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix="hw-", dir="/tmp")  # the bench's own servers
    base = {**os.environ, "HIPPO_HOME": str(workdir), "HIPPO_PROJECT": "proj1",
            "HIPPO_NO_PROGRESS": "1", "XDG_RUNTIME_DIR": run_dir}
    base.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed hippo has its bytecode
    off = {**base, "HIPPO_SERVE": "off"}
    on = {k: v for k, v in base.items() if k != "HIPPO_SERVE"}
    # Serving on but no server for the call to find (another runtime directory): what a
    # call pays for looking, with auto_start off in the bench's own config file.
    absent = {**on, "XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix="hw-none-", dir="/tmp")}
    (workdir / "config.toml").write_text("[serve]\nauto_start = false\n")
    db = build(workdir, args.memories, off)
    server = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db), "serve"],
                              env=on, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        stamp = time.strftime("%H%M%S")
        deadline = time.monotonic() + 120
        while served_calls(db, off) < 1 and time.monotonic() < deadline:  # until warm
            subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "context"],
                           env=on, capture_output=True, check=False)
        if served_calls(db, off) < 1:
            raise SystemExit("the server did not answer")
        for name, (cmd, stdin) in cases(db, stamp, 999, "warm-up").items():
            timed(cmd, off, stdin)  # the file cache, the repeated query's embedding
        times: dict[str, dict[str, list[float]]] = {}
        floor: list[float] = []
        for i in range(args.runs):
            floor.append(timed([sys.executable, "-c", "pass"], off)[0])
            for name, (cmd, stdin) in cases(db, stamp, i, "x").items():
                # A new query stays new for each mode: its own text per mode.
                twin = cases(db, stamp, i, "y")[name]
                third = cases(db, stamp, i, "z")[name]
                trio = [("off", cmd, off, stdin), ("on", twin[0], on, twin[1]),
                        ("absent", third[0], absent, third[1])]
                for mode, c, env, data in trio[i % 3:] + trio[:i % 3]:
                    before = served_calls(db, off) if mode == "on" else 0
                    took, _ = timed(c, env, data)
                    if mode == "on" and served_calls(db, off) != before + 1:
                        raise SystemExit(f"{name}: not answered by the server")
                    times.setdefault(name, {}).setdefault(mode, []).append(took)
            print(f"  round {i + 1}/{args.runs}", file=sys.stderr, end="\r")
        rss = server_status(db, off).get("rss_mb")  # what the server holds, warm and used
    finally:
        server.terminate()
        server.wait(30)
    report(times, floor, args, workdir, rss)


def report(times: dict[str, dict[str, list[float]]], floor: list[float], args: argparse.Namespace,
           workdir: Path, rss: object = None) -> None:
    med = statistics.median
    f = med(floor)
    print(f"\n{'case (median ms of ' + str(args.runs) + ')':<34} {'off':>8} {'none up':>8} "
          f"{'server':>8} {'server - floor':>15}")
    print(f"{'python -c pass (floor)':<34} {f:>8.1f}")
    out: dict[str, object] = {"runs": args.runs, "memories": args.memories,
                              "floor_ms": round(f, 1), "cases": {}}
    for name, modes in times.items():
        a, b, c = med(modes["off"]), med(modes["on"]), med(modes["absent"])
        print(f"{name:<34} {a:>8.1f} {c:>8.1f} {b:>8.1f} {b - f:>15.1f}")
        out["cases"][name] = {"off_ms": round(a, 1), "none_up_ms": round(c, 1),  # type: ignore[index]
                              "on_ms": round(b, 1), "on_minus_floor_ms": round(b - f, 1)}
    for name in ("search --json, new query", "hook claude-code prompt"):
        over = med(times[name]["on"]) - f
        print(f"acceptance: {name}: floor + {over:.1f} ms "
              f"({'ok' if over <= 60 else 'OVER'} the 60 ms bound)")
    print(f"server resident memory (RSS) after the runs: {rss} MiB")
    out["server_rss_mb"] = rss
    (REPO / "bench" / "out").mkdir(exist_ok=True)
    (REPO / "bench" / "out" / "warm.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
