"""Helpers for the session-end tests: real transcripts, the hook's background jobs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from hippo.maintain import session_job
from tests.conftest import DATA

SESSIONS = DATA / "transcripts" / "claude-code-sessions"
CLAUDE_A = SESSIONS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CLAUDE_B = SESSIONS / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
CODEX = DATA / "transcripts" / "codex" / (
    "codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
CODEX_ID = "019e1625-789d-76c0-80ab-3724b5ddb799"


def real(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared/data)")
    return path


def copy(src: Path, dest: Path) -> Path:
    """A fresh copy: its mtime is now, so the ingest idle gate would defer it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(real(src).read_bytes())
    return dest


def jobs(db: Path | str) -> dict[str, Any]:
    from hippo.config import display, is_server

    return session_job.summary(display(db) if is_server(db) else os.path.abspath(db))


def assert_no_store(db: Path | str) -> None:
    """Nothing was created: no file, or on a server no hippo table in the schema."""
    if isinstance(db, Path):
        assert not db.exists()
        return
    from hippo.errors import NoDatabase
    from hippo.store import connect

    with pytest.raises(NoDatabase):
        connect(db, mode="read")


def wait_finished(db: Path, n: int, deadline: float = 240.0) -> dict[str, Any]:
    """Poll the status file until `n` jobs of `db` finished (a generous deadline)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        state = jobs(db)
        if state["finished"] >= n and state["running"] == 0:
            return state
        time.sleep(0.1)
    raise AssertionError(f"background jobs did not finish: {jobs(db)}; log: "
                         f"{session_job.log_path().read_text()[-3000:]}")


def end_queued() -> None:
    """SIGTERM the jobs this test queued for a later throttle interval."""
    import json

    status = session_job.home() / session_job.STATUS
    if not status.exists():
        return
    for job in json.loads(status.read_text())["jobs"]:
        if job.get("outcome") == "queued" and isinstance(job.get("pid"), int):
            try:
                os.kill(job["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass
