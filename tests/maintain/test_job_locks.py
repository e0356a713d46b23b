"""A job's lock across real processes: two never both hold it, and a holder killed with
SIGKILL leaves no stale lock (SQLite: the dead pid; PostgreSQL: the server frees a session
advisory lock when its connection ends)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippo.config import is_server
from hippo.errors import BusyError
from hippo.ops.jobs import acquire, release
from hippo.store import connect

HOLDER = (
    "import sys\n"
    "from hippo.ops.jobs import job\n"
    "from hippo.store import connect\n"
    "db = connect(sys.argv[1])\n"
    "with job(db, 'reindex') as run:\n"
    "    print(run.id, flush=True)\n"
    "    sys.stdin.readline()\n"
)


# Another process taking the same lock, as every job does (`hippo.ops.jobs.job`).
CONTENDER = (
    "import sys\n"
    "from hippo.errors import BusyError\n"
    "from hippo.ops.jobs import job\n"
    "from hippo.store import connect\n"
    "try:\n"
    "    with job(connect(sys.argv[1]), 'reindex') as run:\n"
    "        print(run.id)\n"
    "except BusyError as exc:\n"
    "    print(exc, file=sys.stderr)\n"
    "    sys.exit(int(exc.exit_code))\n"
)


def _contend(db_path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CONTENDER, str(db_path)], text=True,
                          capture_output=True, timeout=60, check=False)


def _holder(db_path: Path | str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ})
    assert proc.stdout is not None
    run_id = proc.stdout.readline().strip()
    assert run_id.startswith("reindex-"), proc.stderr.read() if proc.stderr else ""
    return proc, run_id


def _free_soon(db_path: Path | str) -> bool:
    """Whether the lock is free, allowing the server a moment to see the connection end."""
    db = connect(db_path)
    try:
        for _ in range(50):
            if db.jobs.lock_holder("job:reindex") is None:
                return True
            holder = db.jobs.lock_holder("job:reindex")
            if holder is not None and not is_server(db_path):
                return True  # SQLite: a row of a dead pid, which acquire takes over
            time.sleep(0.1)
        return False
    finally:
        db.close()


def test_two_processes_never_both_hold_a_job_lock(db_path) -> None:
    connect(db_path).close()
    proc, run_id = _holder(db_path)
    try:
        other = _contend(db_path)
        assert other.returncode == 75, other.stderr
        assert "reindex is already running" in other.stderr and run_id in other.stderr
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    done = _contend(db_path)  # released on a normal end
    assert done.returncode == 0, done.stderr
    db = connect(db_path)
    assert db.jobs.get_run(run_id)["outcome"] == "ok"
    db.close()


def test_a_killed_holder_frees_the_lock(db_path) -> None:
    connect(db_path).close()
    proc, run_id = _holder(db_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert _free_soon(db_path)
    after = _contend(db_path)
    assert after.returncode == 0, after.stderr
    db = connect(db_path)
    assert db.jobs.get_run(run_id)["outcome"] == "killed"  # marked by the next holder
    db.close()


def test_a_second_connection_of_the_same_process_is_refused(db_path) -> None:
    if not is_server(db_path):
        pytest.skip("SQLite's job locks are per process (a pid), not per connection")
    first, second = connect(db_path), connect(db_path)
    try:
        acquire(first, "job:x", "run-1")
        with pytest.raises(BusyError, match=r"job:x is already running \(run run-1, pid \d+ on "):
            acquire(second, "job:x", "run-2")
        acquire(first, "job:x", "run-1")  # the holder itself may take it again
        release(first, "job:x", "run-1")
        assert second.jobs.lock_holder("job:x") is None
        acquire(second, "job:x", "run-2")  # free once released (once, however often taken)
        assert first.jobs.lock_holder("job:x")["owner"] == "run-2"
        release(second, "job:x", "run-2")
    finally:
        first.close()
        second.close()
