"""`hippo hook claude-code session-end`: the real hook process, fed what Claude Code sends,
starts a detached job that ingests and extracts that transcript; `hippo stats` shows it."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from hippo.maintain import session_job
from hippo.ops import jobs as joblocks
from hippo.store import connect
from tests.layers.session_support import (
    CLAUDE_A,
    CLAUDE_B,
    assert_no_store,
    copy,
    jobs,
    real,
    wait_finished,
)


def session_end(path: Path | None, cwd: Path, session: str = "258c7280-ae70-4798-800f-"
                "63464d01a85d", **extra: object) -> str:
    """SessionEnd's stdin (Claude Code hooks reference: common fields plus `reason`)."""
    return orjson.dumps({"session_id": session, "transcript_path": str(path) if path else None,
                         "cwd": str(cwd), "permission_mode": "default",
                         "hook_event_name": "SessionEnd", "reason": "prompt_input_exit",
                         **extra}).decode()


def counts(db: Path) -> dict[str, int]:
    d = connect(db)
    try:
        return {t: int(d.scalar(f"SELECT count(*) FROM {t}")) for t in (
            "memories", "echo_chunks", "echo_sessions", "watermarks")}
    finally:
        d.close()


def stats(hippo_proc) -> dict:
    r = hippo_proc(["stats", "--json", "--no-layers"])
    assert r.returncode == 0, r.stderr
    return orjson.loads(r.stdout)


def test_session_end_learns_the_transcript(hippo_proc, db_path: Path, tmp_path: Path) -> None:
    transcript = copy(CLAUDE_A, tmp_path / "projects" / "-work-spotter" / CLAUDE_A.name)
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, tmp_path))
    assert r.returncode == 0 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"hippo hook: learning from {transcript} in the background now")
    wait_finished(db_path, 1)
    data = stats(hippo_proc)
    last = data["session_jobs"]["last"]
    assert last["outcome"] == "ok" and last["agent"] == "claude-code"
    assert last["event"] == "session-end" and last["path"] == str(transcript)
    assert data["session_jobs"]["failures"] == [] and data["session_jobs"]["running"] == 0
    # What the next session can search already: the transcript's chunks and memories.
    assert data["echo"]["chunks"] == last["ingest"]["chunks"] > 100
    assert data["brain"]["memories"] == last["extract"]["added"] > 10
    assert data["extract"]["chunks_pending"] == 0
    assert data["jobs"]["ingest"]["outcome"] == "ok" == data["jobs"]["extract"]["outcome"]
    # The file was fresh (cron's idle gate would defer it); a later cron run adds nothing.
    again = hippo_proc(["--embedder", "hash", "ingest", str(transcript)])
    assert orjson.loads(again.stdout.splitlines()[-1])["chunks"] == 0
    log = Path(data["session_jobs"]["log"]).read_text()
    assert f'"run": "{last["run"]}"' in log and '"outcome": "ok"' in log


def test_hook_returns_while_the_job_waits_for_the_lock(hippo_proc, db_path: Path,
                                                       tmp_path: Path) -> None:
    """The hook holds none of the agent's pipes and does not wait for the job: it returns
    while a cron ingest (here: this test) holds the ingest lock; the job then waits."""
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    db = connect(db_path)
    joblocks.acquire(db, "job:ingest", "cron-ingest-test")
    try:
        r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                       input=session_end(transcript, tmp_path), timeout=60)
        assert r.returncode == 0 and r.stdout == ""
        assert counts(db_path)["echo_chunks"] == 0
    finally:
        joblocks.release(db, "job:ingest", "cron-ingest-test")
        db.close()
    state = wait_finished(db_path, 1)
    assert state["last"]["outcome"] == "ok" and counts(db_path)["echo_chunks"] > 100


def test_a_killed_job_shows_in_stats(hippo_proc, db_path: Path, tmp_path: Path) -> None:
    """A job that never finished (killed while it waited: a shutdown) is a failure."""
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    db = connect(db_path)
    joblocks.acquire(db, "job:ingest", "cron-ingest-test")
    try:
        hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, tmp_path))
        status = orjson.loads((session_job.home() / session_job.STATUS).read_bytes())
        (job,) = status["jobs"]
        os.kill(job["pid"], signal.SIGKILL)  # the job this test started
        end = time.monotonic() + 60
        while jobs(db_path)["running"] and time.monotonic() < end:
            time.sleep(0.05)
    finally:
        joblocks.release(db, "job:ingest", "cron-ingest-test")
        db.close()
    data = stats(hippo_proc)["session_jobs"]
    assert data["running"] == 0 and data["last"] is None
    (failure,) = data["failures"]
    assert failure["outcome"] == "killed" and failure["run"] == job["run"]
    assert counts(db_path)["echo_chunks"] == 0


def test_the_log_is_rotated_past_its_cap(tmp_path: Path) -> None:
    log = tmp_path / "session-jobs.log"
    log.write_bytes(b"x" * session_job.LOG_CAP)
    session_job._rotate(log)
    assert log.exists()  # at the cap: kept
    with log.open("ab") as fh:
        fh.write(b"one more line\n")
    session_job._rotate(log)
    assert not log.exists() and (tmp_path / "session-jobs.log.1").stat().st_size > \
        session_job.LOG_CAP


def test_stdin_left_open(db_path: Path, tmp_path: Path) -> None:
    """An agent that writes the JSON and keeps the pipe open: the hook does not wait for
    an EOF that never comes (it would be cancelled, and nothing learned)."""
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    proc = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder",
                             "hash", "hook", "claude-code", "session-end"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(session_end(transcript, tmp_path).encode())
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=60) == 0  # a hang guard, not a time measured
    finally:
        proc.stdin.close()
        proc.kill()
    assert proc.stderr is not None and proc.stdout is not None
    assert b"in the background now" in proc.stderr.read() and proc.stdout.read() == b""
    assert wait_finished(db_path, 1)["last"]["outcome"] == "ok"


def test_two_sessions_ending_at_once(hippo_proc, db_path: Path, tmp_path: Path) -> None:
    a, b = copy(CLAUDE_A, tmp_path / "a.jsonl"), copy(CLAUDE_B, tmp_path / "b.jsonl")
    env = {**os.environ}
    procs = [subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db_path),
                               "--embedder", "hash", "hook", "claude-code", "session-end"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
             for _ in (a, b)]
    for proc, path in zip(procs, (a, b), strict=True):
        out, _ = proc.communicate(session_end(path, tmp_path, session=path.stem).encode(),
                                  timeout=60)
        assert proc.returncode == 0 and out == b""
    state = wait_finished(db_path, 2)
    assert state["failures"] == []
    together = counts(db_path)
    # The same two files ingested one after the other by the ordinary commands.
    ref = tmp_path / "ref.db"
    for path in (a, b):
        hippo_proc(["--db", str(ref), "--embedder", "hash", "ingest", "--idle-minutes", "0",
                    str(path)])
    hippo_proc(["--db", str(ref), "--embedder", "hash", "extract"])
    assert together == counts(ref)
    assert together["echo_sessions"] >= 2 and together["memories"] > 10


def test_corrupt_transcript_fails_and_stores_nothing(hippo_proc, db_path: Path,
                                                     tmp_path: Path) -> None:
    hippo_proc(["--embedder", "hash", "add", "Deploys go through make deploy"])
    before = counts(db_path)
    bad = tmp_path / "corrupt.jsonl"
    bad.write_bytes(os.urandom(4096) + b"\n[1, 2]\n{\"no\": \"claude\"\n")
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(bad, tmp_path))
    assert r.returncode == 0 and r.stdout == ""
    wait_finished(db_path, 1)
    assert counts(db_path) == before
    jobs = stats(hippo_proc)["session_jobs"]
    assert jobs["last"]["outcome"] == "failed"
    (failure,) = jobs["failures"]
    assert failure["path"] == str(bad)
    assert failure["error"] == f"{bad}: not a readable claude-code transcript; nothing stored"


def test_extraction_failing_after_the_ingest(hippo_proc, db_path: Path, tmp_path: Path) -> None:
    """The llm extractor without an API key: the ingest's chunks stay (the next `hippo
    extract` takes them: its watermark did not move); the job says where it failed."""
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, tmp_path), env={"HIPPO_EXTRACTOR": "llm"})
    assert r.returncode == 0 and r.stdout == ""
    wait_finished(db_path, 1)
    data = stats(hippo_proc)
    (failure,) = data["session_jobs"]["failures"]
    assert failure["outcome"] == "failed" and failure["step"] == "extract"
    assert "OPENAI_API_KEY" in failure["error"]
    assert failure["ingest"]["chunks"] == data["echo"]["chunks"] > 100
    assert data["brain"]["memories"] == 0
    assert data["extract"]["chunks_pending"] == data["echo"]["chunks"]


def test_a_database_it_cannot_open_is_left_as_it_was(hippo_proc, tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a database " * 400)
    digest = hashlib.sha256(broken.read_bytes()).hexdigest()
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(broken), "--embedder",
                          "hash", "hook", "claude-code", "session-end"],
                         input=session_end(transcript, tmp_path), capture_output=True,
                         text=True, check=False, timeout=60)
    assert out.returncode == 0 and out.stdout == ""
    state = wait_finished(broken, 1)
    assert state["last"]["outcome"] == "failed"
    assert "not a SQLite database" in state["last"]["error"]
    assert hashlib.sha256(broken.read_bytes()).hexdigest() == digest
    try:  # and no -wal beside it holding anything
        assert Path(f"{broken}-wal").stat().st_size == 0
    except FileNotFoundError:
        pass
    # `hippo stats` of a good database does not list another database's jobs.
    good = tmp_path / "good.db"
    subprocess.run([sys.executable, "-m", "hippo", "--db", str(good), "--embedder", "hash",
                    "add", "a memory, so the store exists"], capture_output=True, check=True)
    r = subprocess.run([sys.executable, "-m", "hippo", "--db", str(good), "stats", "--json",
                        "--no-layers"], capture_output=True, text=True, check=True)
    assert orjson.loads(r.stdout)["session_jobs"]["jobs"] == 0


def test_bad_session_end_input_never_breaks_the_agent(hippo_proc, db_path: Path,
                                                      tmp_path: Path) -> None:
    real(CLAUDE_A)
    cases = [
        (session_end(None, tmp_path), "no transcript_path on stdin"),
        (session_end(tmp_path / "gone.jsonl", tmp_path),
         f"transcript {tmp_path / 'gone.jsonl'} is not a file"),
        (orjson.dumps({"hook_event_name": "SessionEnd"}).decode(), "no session_id on stdin"),
        ("not json", "stdin is not the hook's JSON"),
    ]
    for stdin, why in cases:
        for args in (["hook", "claude-code", "session-end"], ["hook", "claude-code"]):
            r = hippo_proc(["--embedder", "hash", *args], input=stdin)
            assert r.returncode == 0 and r.stdout == "", r.stderr
            (line,) = r.stderr.splitlines()
            if args[-1] == "claude-code" and stdin == "not json":
                assert line == "hippo hook: stdin is not the hook's JSON (no context added)"
            else:
                assert line == f"hippo hook: {why} (nothing learned)", line
    # Nothing stored: no file, or (a server) no chunk in the store
    assert (isinstance(db_path, Path) and not db_path.exists()) or counts(
        db_path)["echo_chunks"] == 0


def test_read_only_log_dir_is_reported(hippo_proc, db_path: Path, tmp_path: Path,
                                       isolated_home: Path) -> None:
    """Where the job could not even be started, the hook says so (and the agent goes on)."""
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    (isolated_home / "logs").write_text("a file where the log directory should be")
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, tmp_path))
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr.startswith("hippo hook: ") and r.stderr.endswith("(nothing learned)\n")
    assert_no_store(db_path)

