"""How long the session-end hooks keep the agent waiting, and how long until the next
session has what the ended one taught.

Usage: python bench/bench_hooks.py [--runs 9] [--transcript PATH] [--embedder hash|local]

Each run is a new `hippo hook ...` process fed the stdin JSON the agent sends, timed
until it exits (the agent's wait: Claude Code gives every SessionEnd hook together 1.5 s
by default). The background job it starts is then awaited through `hippo stats` before
the next run, so runs do not compete with each other's jobs; its time from the hook's
start to its recorded outcome is the second figure: once for the first run (all its text
new to the embedder) and for the later ones (the transcript as other sessions: stored
anew, its text already in the embedding cache). Cases: Claude Code `session-end`,
Codex `stop` when it starts a job, and Codex `stop` inside the throttle interval (no
job). `python -c pass` and `hippo hook claude-code session-start` on an empty database
are measured in the same run as the floor of a cold Python process and of a context hook.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "transcripts"
CLAUDE = DATA / "claude-code-sessions" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = DATA / "codex" / ("codemie-code__rollout-2026-05-11T11-26-55-"
                          "019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")


def timed(cmd: list[str], stdin: str, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, text=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def wait_job(hippo: list[str], env: dict[str, str], jobs: int, deadline: float = 600) -> None:
    """Until `hippo stats` counts `jobs` finished background jobs."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        out = subprocess.run([*hippo, "stats", "--json", "--no-layers"], env=env, text=True,
                             capture_output=True, check=True).stdout
        if json.loads(out)["session_jobs"]["finished"] >= jobs:
            return
        time.sleep(0.05)
    raise SystemExit("a background job did not finish within 10 minutes")


def wait_exit(home: str) -> None:
    """Until every finished job's process is gone too (it still frees its memory after
    recording its outcome): the next hook should not compete with it for the CPU."""
    status = Path(home) / "session-jobs.json"
    for job in json.loads(status.read_text())["jobs"] if status.exists() else []:
        pid = job.get("pid")
        while job.get("finished_at") and isinstance(pid, int):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                break
            time.sleep(0.02)


def end_queued(home: str) -> None:
    """Stop the jobs still waiting for their throttle interval (they were started here)."""
    state = json.loads((Path(home) / "session-jobs.json").read_text())
    for job in state["jobs"]:
        if job.get("outcome") == "queued" and isinstance(job.get("pid"), int):
            try:
                os.kill(job["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass


def new_session(data: bytes, i: int) -> bytes:
    """The transcript as another session (its session id changed): stored anew, though its
    text is in the embedding cache after the first run."""
    for line in data.splitlines()[:50]:
        sid = json.loads(line).get("sessionId")
        if isinstance(sid, str) and len(sid) > 8:
            return data.replace(sid.encode(), f"{i:08x}{sid[8:]}".encode())
    return data


def row(name: str, values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    print(f"{name:<46} {statistics.median(ms):>9.0f} {min(ms):>7.0f} {max(ms):>7.0f}")
    return {"median_ms": round(statistics.median(ms), 1), "min_ms": round(min(ms), 1),
            "max_ms": round(max(ms), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--transcript", type=Path, default=CLAUDE)
    ap.add_argument("--codex-transcript", type=Path, default=CODEX)
    ap.add_argument("--embedder", default="hash")
    args = ap.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HIPPO_HOME": tmp, "HIPPO_NO_PROGRESS": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        hippo = [sys.executable, "-m", "hippo", "--db", str(Path(tmp) / "bench.db"),
                 "--embedder", args.embedder]
        subprocess.run([*hippo, "add", "warm-up memory"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        start = json.dumps({"session_id": "s", "cwd": tmp, "hook_event_name": "SessionStart",
                            "source": "startup"})
        print(f"{'case':<46} {'median ms':>9} {'min':>7} {'max':>7}")
        timed([sys.executable, "-c", "pass"], "", env)  # warm the OS file cache
        results["python -c pass (floor)"] = row("python -c pass (floor)", [
            timed([sys.executable, "-c", "pass"], "", env) for _ in range(args.runs)])
        results["claude-code session-start"] = row("hippo hook claude-code session-start", [
            timed([*hippo, "hook", "claude-code"], start, env) for _ in range(args.runs)])
        returns, typer_path, learned, jobs = [], [], [], 1
        timed([*hippo, "hook", "claude-code", "session-start"], start, env)
        copies = []
        for i in range(2 * args.runs):  # a copy per run: a new session, a whole file to learn
            copies.append(Path(tmp) / f"claude-{i}.jsonl")
            copies[-1].write_bytes(new_session(args.transcript.read_bytes(), i))
        for i, copy in enumerate(copies):
            wait_exit(tmp)
            payload = json.dumps({"session_id": f"bench-{i}", "transcript_path": str(copy),
                                  "cwd": tmp, "hook_event_name": "SessionEnd",
                                  "reason": "prompt_input_exit"})
            # As pasted (event named: no Typer), and with the event left to the stdin.
            fast = i % 2 == 0
            cmd = [*hippo, "hook", "claude-code", *(["session-end"] if fast else [])]
            t = time.perf_counter()
            (returns if fast else typer_path).append(timed(cmd, payload, env))
            wait_job(hippo, env, jobs)
            if fast:
                learned.append(time.perf_counter() - t)
            jobs += 1
        results["claude-code session-end: hook returns"] = row(
            "hippo hook claude-code session-end: returns", returns)
        size = args.transcript.stat().st_size // 1024
        results["claude-code session-end: job done, first"] = row(
            f"  ... its job done, first run ({size} KiB)", learned[:1])
        results["claude-code session-end: job done, again"] = row(
            "  ... the same text as a new session", learned[1:])
        results["claude-code (event from stdin, Typer)"] = row(
            "hippo hook claude-code (event from stdin)", typer_path)
        first, queued, dropped = [], [], []
        env_codex = {**env, "HIPPO_STOP_INGEST_MINUTES": "60"}
        copies = []
        for i in range(args.runs):
            copies.append(Path(tmp) / f"rollout-{i}.jsonl")
            copies[-1].write_bytes(args.codex_transcript.read_bytes())
        for i, copy in enumerate(copies):
            wait_exit(tmp)
            payload = json.dumps({"session_id": f"codex-{i}", "turn_id": "t1",
                                  "transcript_path": str(copy), "cwd": tmp,
                                  "hook_event_name": "Stop", "model": "gpt-5-codex",
                                  "permission_mode": "default", "stop_hook_active": False,
                                  "last_assistant_message": "Done."})
            first.append(timed([*hippo, "hook", "codex", "stop"], payload, env_codex))
            wait_job(hippo, env, jobs)
            jobs += 1
            # The next Stop queues one job for the interval's end; the one after is dropped.
            queued.append(timed([*hippo, "hook", "codex", "stop"], payload, env_codex))
            dropped.append(timed([*hippo, "hook", "codex", "stop"], payload, env_codex))
        end_queued(tmp)
        results["codex stop: starts a job"] = row("hippo hook codex stop: starts a job", first)
        results["codex stop: queues one"] = row("hippo hook codex stop: queues one", queued)
        results["codex stop: throttled"] = row("hippo hook codex stop: throttled", dropped)
    print(json.dumps({"runs": args.runs, "embedder": args.embedder, "results": results}))


if __name__ == "__main__":
    main()
