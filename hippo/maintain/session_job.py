"""A session's memory updated when it ends: a detached ingest + extract of its transcript.

`start()` runs inside `hippo hook AGENT session-end|stop`: it records the job, starts
`python -m hippo.maintain.session_job` in a new session (stdin from /dev/null, stdout and
stderr appended to the log, no pipe of the agent's held open) and returns at once. The
child waits for the ingest and extract job locks (cron or another session may hold
them), ingests that transcript with the idle gate skipped (only that file is read), then
runs the usual extraction. Each step is its own transaction, so a failed step leaves the
store as it was. Every job's outcome goes to `<home>/session-jobs.json`, which `hippo
stats` reads (it also holds the Codex `Stop` throttle: at most one job per session per
`stop_ingest_minutes`).

Only the standard library is imported at module level: the hook must return quickly.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.ops.jobs import Run
    from hippo.store import Store

STATUS = "session-jobs.json"
LOCK = "session-jobs.lock"
LOG = "logs/session-jobs.log"
LOG_CAP = 1 << 20  # bytes; the log is rotated to `.1` before it grows past this
KEEP_JOBS = 50  # job records kept in the status file
KEEP_FAILURES = 5  # failures `hippo stats` lists
LOCK_WAIT_S = 1200.0  # how long a job waits for a job lock before giving up ("busy")
THROTTLE_KEEP_S = 86400.0  # Stop throttle entries older than this are dropped
# The reader for each agent's transcripts: a file the agent named is read as its format.
FORMATS = {"claude-code": "claude-code", "codex": "codex"}


def home() -> Path:
    from hippo.config import home_dir

    return home_dir()


def log_path() -> Path:
    return home() / LOG


@contextlib.contextmanager
def _status() -> Iterator[dict[str, Any]]:
    """The status file, read and rewritten under an exclusive lock (atomic replace)."""
    base = home()
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(os.open(base / LOCK, os.O_RDWR | os.O_CREAT, 0o600), "r+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        state = _read(base / STATUS)
        yield state
        tmp = base / f"{STATUS}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # paths are private
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=1, sort_keys=True)
        os.replace(tmp, base / STATUS)


def _read(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    if not isinstance(state, dict):
        state = {}
    if not isinstance(state.get("jobs"), list):
        state["jobs"] = []
    state["jobs"] = [j for j in state["jobs"] if isinstance(j, dict)]
    throttle = state.get("throttle")
    state["throttle"] = {k: v for k, v in throttle.items() if isinstance(v, (int, float))} \
        if isinstance(throttle, dict) else {}
    return state


def _job(state: dict[str, Any], run: str) -> dict[str, Any]:
    for job in state["jobs"]:
        if job.get("run") == run:
            return job  # type: ignore[no-any-return]
    job = {"run": run}
    state["jobs"].append(job)
    del state["jobs"][:-KEEP_JOBS]
    return job


def codex_sessions() -> Path:
    """Where Codex keeps its rollouts: $CODEX_HOME/sessions, else ~/.codex/sessions."""
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser() / "sessions"


def codex_rollout(session: str) -> Path | None:
    """The rollout file of a Codex session (`YYYY/MM/DD/rollout-<time>-<id>.jsonl`)."""
    import re

    if not re.fullmatch(r"[0-9A-Za-z-]{1,64}", session):
        return None
    found = sorted(codex_sessions().glob(f"*/*/*/rollout-*-{session}.jsonl"))
    return found[-1] if found else None


def _now_iso() -> str:
    """`hippo.timeutil.now_iso()`'s format, without importing datetime into the hook."""
    t = time.time()
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t))}.{int(t % 1 * 1000):03d}Z"


def _new_run_id() -> str:
    return f"session-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.urandom(3).hex()}"


def _rotate(log: Path) -> None:
    try:
        if log.stat().st_size > LOG_CAP:
            os.replace(log, log.with_name(log.name + ".1"))
    except FileNotFoundError:
        pass


def start(agent: str, event: str, session: str, transcript: Path, *, db: Path | str,
          flags: dict[str, str], every_minutes: float | None = None,
          cwd: str | None = None) -> str:
    """Queue the background job for one transcript and return what happened, in a line.

    `every_minutes` (Codex `Stop`): a job ran for this session less than that long ago, so
    at most one more is queued, to start when the interval is over; any further one is
    dropped (that later job reads the file as it is then)."""
    import subprocess

    from hippo.config import display, is_server

    now = time.time()
    # A server's URL reaches the job in its environment, never in its argv (which any
    # user's `ps` shows, password and all); the record names it without the password.
    env = {**os.environ, "HIPPO_NO_PROGRESS": "1"}
    if is_server(db):
        env["HIPPO_DB"] = str(db)
    db_arg = [] if is_server(db) else ["--db", str(db)]
    not_before: float | None = None
    with _status() as state:
        if every_minutes is not None:
            key = f"{display(db)}\n{agent}:{session}"
            throttle = state["throttle"]
            keep = max(THROTTLE_KEEP_S, every_minutes * 60)
            for old in [k for k, last in throttle.items() if now - last > keep]:
                del throttle[old]
            last = throttle.get(key)  # when the latest job started, or is queued to start
            if last is not None and last > now:
                return (f"a job for session {session} is already queued for "
                        f"{_clock(last)}; nothing more to do")
            if last is not None and now - last < every_minutes * 60:
                not_before = last + every_minutes * 60
            throttle[key] = not_before or now
        run = _new_run_id()
        log = log_path()
        log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _rotate(log)
        argv = [sys.executable, "-m", "hippo.maintain.session_job", "--run", run,
                "--agent", agent, "--event", event, "--session", session,
                "--path", str(transcript), *db_arg]
        if flags.get("embedder"):  # the database and the embedder the hook was given
            argv += ["--embedder", str(flags["embedder"])]
        if not_before is not None:
            argv += ["--not-before", repr(not_before)]
        if cwd:  # the project whose instruction files and notes the job reads too
            argv += ["--cwd", cwd]
        job = _job(state, run)
        job.update(db=display(db), agent=agent, event=event, session=session,
                   path=str(transcript), queued_at=_now_iso(), outcome="queued",
                   not_before=_iso(not_before) if not_before else None)
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            child = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, close_fds=True,
                start_new_session=True,  # not in the agent's process group: outlives it
                env=env)
        finally:
            os.close(fd)
        job["pid"] = child.pid
    when = f"at {_clock(not_before)}" if not_before else "now"
    return f"learning from {transcript} in the background {when} (run {run}, log {log})"


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _record(run: str, **fields: Any) -> None:
    with _status() as state:
        _job(state, run).update(fields)


def summary(db: str) -> dict[str, Any]:
    """What `hippo stats` shows of the background jobs of this database."""
    state = _read(home() / STATUS)
    jobs = [j for j in state["jobs"] if j.get("db") == db]
    done = [j for j in jobs if j.get("finished_at")]
    alive = [j for j in jobs if not j.get("finished_at") and _alive(j.get("pid"))]
    lost = [j for j in jobs if not j.get("finished_at") and not _alive(j.get("pid"))]
    failures = [j for j in done if j.get("outcome") in ("failed", "busy")] + [
        {**j, "outcome": "killed"} for j in lost]
    failures.sort(key=lambda j: str(j.get("finished_at") or j.get("queued_at")))
    return {"log": str(log_path()), "jobs": len(jobs), "finished": len(done),
            "queued": sum(j.get("outcome") == "queued" for j in alive),
            "running": sum(j.get("outcome") != "queued" for j in alive),
            "last": _brief(done[-1]) if done else None,
            "failures": [_brief(j) for j in failures[-KEEP_FAILURES:]]}


def _brief(job: dict[str, Any]) -> dict[str, Any]:
    keys = ("run", "outcome", "agent", "event", "session", "path", "finished_at", "step",
            "error", "ingest", "extract", "notes")
    return {k: job[k] for k in keys if job.get(k) is not None}


def _alive(pid: Any) -> bool:
    """Whether `pid` is still one of our jobs (not a zombie, not a reused pid)."""
    from hippo.ops.jobs import _alive as alive

    if not isinstance(pid, int) or not alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no procfs here: trust the signal
    except OSError:
        return True
    return b"hippo.maintain.session_job" in cmdline  # empty for a zombie


# ---- the detached child ---------------------------------------------------------------


class JobFailed(Exception):
    """The transcript could not be learned from (nothing of it was stored)."""


@contextlib.contextmanager
def waiting_job(db: Store, name: str, deadline: float) -> Iterator[Run]:
    """`jobs.job(db, name)`, waiting (with backoff) while another process holds its lock."""
    from hippo.errors import BusyError
    from hippo.ops import jobs

    delay = 0.1
    while True:
        entered = False
        try:
            with jobs.job(db, name) as run:
                entered = True
                yield run
            return
        except BusyError:
            if entered or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def learn(h: Hippo, agent: str, path: Path, out: dict[str, Any], *,
          emit: Callable[[dict[str, Any]], None], wait_s: float = LOCK_WAIT_S,
          cwd: str | None = None) -> None:
    """Ingest one transcript (idle gate skipped), then extract, then read the instruction
    files and agent notes of the session's project (`cwd`); `out` gets each step's summary
    as it ends (`step` names the one in progress, for a failure's record)."""
    from hippo.extract import get
    from hippo.extract.run import Extraction
    from hippo.extract.settings import ExtractSettings
    from hippo.ingest.run import Ingestor

    deadline = time.monotonic() + wait_s
    out.update(outcome="ok", step="ingest")
    with waiting_job(h.db, "ingest", deadline) as run:
        ing = Ingestor(h, idle_minutes=0, fmt=FORMATS.get(agent), strict=True)
        results = []
        summary = ing.run([path], lambda r: results.append(r))
        summary["run_id"] = run.id
        run.summary = summary
        bad = [r for r in results if r.status == "skipped"]
        if bad:
            run.outcome = "failed"
            raise JobFailed(f"{path}: {bad[0].reason}; nothing stored")
        run.outcome = "partial" if summary["skipped"] else "ok"
    for r in results:
        emit(r.event())
    out["ingest"] = {k: summary[k] for k in ("messages", "chunks", "redactions", "duplicates")}
    if summary["skipped"]:
        out["ingest"]["skipped"] = summary["skipped"]
        out["outcome"] = "partial"
    out["step"] = "extract"
    conf = ExtractSettings.from_settings(h.settings,
                                         extractor=os.environ.get("HIPPO_EXTRACTOR") or None)
    ex = get(conf.extractor, h, conf)
    with waiting_job(h.db, "extract", deadline) as run:
        x = Extraction(h, ex, conf, run_id=run.id)
        try:
            summary = x.run(x.plan(None), emit)
        finally:
            run.summary = x.summary
        run.outcome = "partial" if summary["sessions_skipped"] else "ok"
    out["extract"] = {k: summary[k] for k in ("extractor", "sessions", "chunks", "added",
                                              "reinforced", "sessions_skipped")}
    if summary["sessions_skipped"]:
        out["outcome"] = "partial"
    if cwd:
        out["step"] = "notes"
        _notes(h, cwd, out, deadline)
    del out["step"]


def _notes(h: Hippo, cwd: str, out: dict[str, Any], deadline: float) -> None:
    """The project's instruction files and Claude Code's notes of it (`hippo.ingest.notes`;
    off with `[agents] notes = false`); the user-wide ones are `hippo ingest`'s."""
    from hippo.ingest.notes import NotesSync, present, project_files
    from hippo.layers.hint import AgentSettings
    from hippo.project import locate, of_session

    if not AgentSettings.from_settings(h.settings).notes:
        return
    root = locate(cwd).root or cwd
    files = project_files(root, of_session(h.db, root))
    if not present(files):
        return
    with waiting_job(h.db, "notes", deadline) as run:
        summary = NotesSync(h, run_id=run.id).run(files, lambda ev: None)
        run.summary = {**summary, "run_id": run.id}
        run.outcome = "ok"
    out["notes"] = {k: summary[k] for k in ("files", "read", "added", "ended")}


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m hippo.maintain.session_job",
                                description="The detached job of a session-end hook.")
    for name in ("--run", "--agent", "--event", "--session", "--path"):
        p.add_argument(name, required=True)
    p.add_argument("--db")  # absent: HIPPO_DB (a server's URL travels there)
    p.add_argument("--embedder")
    p.add_argument("--not-before", type=float)
    p.add_argument("--cwd")
    args = p.parse_args(argv)
    os.nice(10)  # a background job: the agent and the person come first
    if args.not_before:
        time.sleep(max(0.0, args.not_before - time.time()))
    _record(args.run, started_at=_now_iso(), pid=os.getpid(), outcome="running")
    line: dict[str, Any] = {"event": "session-job", "run": args.run, "agent": args.agent,
                            "session": args.session, "path": args.path}
    result: dict[str, Any] = {}
    try:
        from hippo.console.output import dumps
        from hippo.core import Hippo

        h = Hippo(None, db=args.db, embedder=args.embedder)

        def emit(event: dict[str, Any]) -> None:  # files and sessions; memories are in stats
            if event.get("event") in ("file", "session"):
                sys.stdout.buffer.write(dumps({**event, "run": args.run}))

        learn(h, args.agent, Path(args.path), result, emit=emit, cwd=args.cwd)
    except Exception as exc:  # noqa: BLE001 - every failure is recorded, then the job ends
        from hippo.errors import BusyError, HippoError, scrub

        message = scrub(" ".join(str(exc).split()) or type(exc).__name__)
        # What the steps before the failing one stored stays (each is its own transaction).
        result.update(outcome="busy" if isinstance(exc, BusyError) else "failed",
                      error=message)
        if not isinstance(exc, (HippoError, JobFailed)):
            import traceback

            sys.stderr.write(scrub(traceback.format_exc()))
    _record(args.run, finished_at=_now_iso(), **result)
    sys.stdout.write(json.dumps({**line, **result, "finished_at": _now_iso()}) + "\n")
    sys.stdout.flush()
    return 0 if result["outcome"] in ("ok", "partial") else 1


if __name__ == "__main__":
    sys.exit(main())
