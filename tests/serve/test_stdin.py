"""A served hook's stdin: read once, handed to the command run here when the server cannot
take the call, so a process waits for its stdin one deadline in all."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippo.cli import hookstdin
from tests.serve.helpers import env_on, off, seed, serving

PARTIAL = b'{"hook_event_name": "UserPromptSubmit", "prompt": "deploy tok'


def _hook(db: Path | str, env: dict[str, str]) -> tuple[float, int, bytes, bytes]:
    """The prompt hook, given a JSON object it never finishes on a pipe kept open."""
    proc = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db), "hook",
                             "claude-code", "prompt"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    started = time.monotonic()
    proc.stdin.write(PARTIAL)
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=60)
        waited = time.monotonic() - started
        out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.stdin.close()
    return waited, code, out, err


def test_a_served_hook_with_incomplete_stdin_waits_once(db_path: Path | str) -> None:
    seed(db_path, ["the deploy script needs the staging token from vault"])
    with serving(db_path):
        waited, code, out, err = _hook(db_path, env_on())
    # One deadline, not two: generous above it, well below twice it.
    assert hookstdin.STDIN_WAIT_S <= waited < 1.6 * hookstdin.STDIN_WAIT_S
    alone = _hook(db_path, off())
    assert (code, out, err) == alone[1:]
    assert b"no whole JSON object" in err and out == b""


def test_a_second_read_goes_on_from_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: the second read of the same stdin keeps the first's bytes and deadline."""
    import json

    monkeypatch.setattr(hookstdin, "STDIN_WAIT_S", 2.0)
    r, w = os.pipe()
    stdin = os.fdopen(r, "rb", buffering=0)
    monkeypatch.setattr(sys, "stdin", type("S", (), {"fileno": lambda self: r})())
    try:
        os.write(w, b'{"a": ')
        with pytest.raises(hookstdin.HookInputError):
            hookstdin.read_stdin(json.loads)
        started = time.monotonic()
        with pytest.raises(hookstdin.HookInputError):
            hookstdin.read_stdin(json.loads)  # the deadline has passed: no second wait
        assert time.monotonic() - started < 1.0  # (a second wait would be 2 s)
    finally:
        stdin.close()
        os.close(w)
