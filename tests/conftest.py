"""Shared fixtures: every test gets its own HIPPO_HOME and database in tmp."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from hypothesis import settings

# CI runs are reproducible (same examples every run) and never fail on a slow machine's
# timing; a developer's run keeps exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HIPPO_HOME in tmp; no HIPPO_* setting leaks in from the developer's shell."""
    for key in list(os.environ):
        if key.startswith("HIPPO_TEST_"):  # the test run's own settings (tests/pgtest.py)
            continue
        if key.startswith("HIPPO_") or key in ("OPENAI_API_KEY", "VOYAGE_API_KEY",
                                               "OPENAI_BASE_URL"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HIPPO_HOME", str(home))
    # The user's own agents' files (~/.claude, ~/.codex, ~/.gemini) are not the test's:
    # `hippo ingest` reads them by default, `hippo doctor` lists what they set up.
    user = tmp_path / "user-home"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("HIPPO_PROJECT", "testproj")
    monkeypatch.setenv("HIPPO_NO_PROGRESS", "1")
    # No call in a test uses or starts a warm server (`hippo serve`) unless the test says
    # so (tests/serve/), and none reaches the developer's own runtime directory.
    monkeypatch.setenv("HIPPO_SERVE", "off")
    # (A short path of its own: a socket's path is at most 107 bytes.)
    run = tempfile.mkdtemp(prefix="hr-", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", run)
    yield home
    _kill_servers(run)  # a server a test's call started (tests/serve checks none is left)
    shutil.rmtree(run, ignore_errors=True)


def _kill_servers(run: str) -> list[int]:
    """Kill every `hippo serve` whose info file is in the runtime directory `run`."""
    import glob
    import signal

    killed = []
    for info in glob.glob(os.path.join(run, "hippo", "*.json")):
        try:
            pid = int(orjson.loads(Path(info).read_bytes())["pid"])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (OSError, ValueError, KeyError):
            continue
    return killed


# The store the suite runs against: "sqlite" (a file per test) or "postgres" (a schema per
# test on a real server, tests/pgtest.py). `.ci/run` runs the suite once per backend.
BACKEND = os.environ.get("HIPPO_TEST_BACKEND", "sqlite")
if BACKEND not in ("sqlite", "postgres"):
    raise pytest.UsageError(f"HIPPO_TEST_BACKEND must be sqlite or postgres, not {BACKEND!r}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only(reason): the test is about SQLite's file "
                            "(its pages, WAL, modes, salvage); skipped on the postgres run")
    config.addinivalue_line("markers", "postgres_only(reason): skipped on the sqlite run")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the postgres run, only the tests that open the store the backend gives
    (`db_path`, directly or through `cli` / `hippo_proc`) run: the rest do not touch the
    backend and ran on the sqlite run. Tests marked sqlite_only are skipped, with why."""
    if BACKEND == "sqlite":
        for item in items:
            marker = item.get_closest_marker("postgres_only")
            if marker:
                item.add_marker(pytest.mark.skip(reason=marker.kwargs.get(
                    "reason", marker.args[0] if marker.args else "postgres only")))
        return
    from tests.pgtest import team_skip

    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        why = team_skip(item.nodeid)  # HIPPO_TEST_PG_TEAM=1 (tests/pgtest.py)
        if why:
            item.add_marker(pytest.mark.skip(reason="team store: " + why))
        marker = item.get_closest_marker("sqlite_only")
        if marker:
            item.add_marker(pytest.mark.skip(reason="sqlite only: " + marker.kwargs.get(
                "reason", marker.args[0] if marker.args else "")))
            keep.append(item)
        elif "db_path" in getattr(item, "fixturenames", ()):
            keep.append(item)
        else:
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


@pytest.fixture
def db_path(tmp_path: Path) -> Iterator[Path | str]:
    """The test's store: a file in tmp, or (HIPPO_TEST_BACKEND=postgres) the URL of a
    fresh schema on the test server."""
    if BACKEND == "postgres":
        from tests.pgtest import store_url

        with store_url() as url:
            yield url
    else:
        yield tmp_path / "hippo.db"


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def records(self) -> list[dict]:
        """Every stdout line parsed as JSON (fails the test if one is not)."""
        return [orjson.loads(line) for line in self.stdout.splitlines() if line.strip()]


@pytest.fixture
def cli(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run the real `hippo` entry point in-process, stdout and stderr apart.

    It goes through `hippo.cli.main.main`, as the console script does, so a search call
    takes the Typer-free fast path and everything else the Typer app.
    """
    from typer.testing import CliRunner

    from hippo.cli.main import main

    def run(*args: str, input: str | bytes | None = None, db: Path | None = db_path,
            embedder: str | None = "hash", env: dict[str, str] | None = None) -> Result:
        argv: list[str] = []
        if db is not None:
            argv += ["--db", str(db)]
        if embedder is not None:
            argv += ["--embedder", embedder]
        code = 0
        with CliRunner().isolation(input=input, env=env) as (out, err, _):
            monkeypatch.setattr(sys, "argv", ["hippo", *argv, *args])
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            return Result(code, out.getvalue().decode(), err.getvalue().decode())

    return run


@pytest.fixture
def hippo_proc(db_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `python -m hippo` as a real process (for stdin/exit-code/crash tests)."""

    def run(args: Sequence[str], input: str | bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "hippo", "--db", str(db_path), *args],
                              check=False, input=input, capture_output=True,
                              text=isinstance(input, str) or input is None,
                              env=full_env, timeout=timeout)

    return run
