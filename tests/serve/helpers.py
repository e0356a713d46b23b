"""Real `hippo serve` processes for the tests, and the teardown that leaves none running."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hippo.serve import spawn


def env_on(**extra: str) -> dict[str, str]:
    """The test's environment with serving on (conftest turns it off for every test)."""
    env = {k: v for k, v in os.environ.items() if k != "HIPPO_SERVE"}
    env.update(extra)
    return env


def off(**extra: str) -> dict[str, str]:
    return {**os.environ, "HIPPO_SERVE": "off", **extra}


def hippo(db: Path | str, *args: str, env: dict[str, str] | None = None,
          input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """`python -m hippo --db DB ARGS` as a real process, bytes in and out."""
    return subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), *args],
                          input=input if input is not None else b"", capture_output=True,
                          env=env if env is not None else env_on(), timeout=timeout,
                          check=False)


def files(db: Path | str) -> dict[str, str]:
    """The server files a client given `--db DB` looks for (this process's env and cwd)."""
    return spawn.files_for(str(db))


def status(db: Path | str) -> dict[str, Any] | None:
    answer = spawn.ask(files(db), "status")
    return answer if answer is not None and "pid" in answer else None


def calls(db: Path | str) -> int:
    answer = status(db)
    return int(answer["calls"]) if answer else -1


def start(db: Path | str, *args: str, idle_minutes: float = 5.0) -> subprocess.Popen[bytes]:
    """`hippo serve` in the foreground as a child process; returns once it answers and has
    loaded what it preloads (a first call would otherwise find it busy and run itself)."""
    proc = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db), *args, "serve",
                             "--idle-minutes", str(idle_minutes)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env_on())
    assert spawn.wait_for(files(db), up=True, timeout=60), _died(proc)
    ready(db)
    return proc


def ready(db: Path | str, timeout: float = 60) -> None:
    """Wait until a served call would start at once (the preload holds the call lock)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        probe = hippo(db, "context", "--budget", "1")
        if calls(db) > 0 or probe.returncode not in (0,):
            return
        time.sleep(0.1)


def _died(proc: subprocess.Popen[bytes]) -> str:
    proc.poll()
    err = proc.stderr.read().decode() if proc.returncode is not None and proc.stderr else ""
    return f"the server did not answer (exit {proc.returncode}): {err}"


def kill_all() -> list[int]:
    """Kill every server whose info file is in this test's runtime directory; their pids."""
    from tests.conftest import _kill_servers

    return _kill_servers(os.environ["XDG_RUNTIME_DIR"])


def gone(pid: int, timeout: float = 15) -> bool:
    """Whether process `pid` has exited (and been reaped, if our child) within `timeout`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return True
        except ChildProcessError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def serving(db: Path | str, *args: str, idle_minutes: float = 5.0
            ) -> Iterator[subprocess.Popen[bytes]]:
    proc = start(db, *args, idle_minutes=idle_minutes)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def same(a: subprocess.CompletedProcess[bytes], b: subprocess.CompletedProcess[bytes],
         ) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def seed(db: Path | str, texts: Sequence[str], *, embedder: str = "hash") -> None:
    for text in texts:
        out = hippo(db, "--embedder", embedder, "add", text, "--type", "fact", env=off())
        assert out.returncode == 0, out.stderr
