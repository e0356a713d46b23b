"""Servers for the bad-input tests: pgserver's (tests/pgtest.py, through `db_path`), and
Debian's PostgreSQL 15, which has no pgvector and asks for a password (scram-sha-256).

The PostgreSQL 15 server runs from a temp dir on a unix socket only (no TCP), as a user
that is not root (`nobody` when the tests run as root: initdb refuses root), and is stopped
when the session ends. Without its binaries the tests that need it are skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG15_BIN = Path(os.environ.get("HIPPO_TEST_PG15_BIN", "/usr/lib/postgresql/15/bin"))
ADMIN = "hippo_admin"
PASSWORD = "Pg15-s3cret-word"  # the tests check it never shows in any output


@dataclass(frozen=True)
class Pg15:
    """A running PostgreSQL 15 without pgvector: `url(...)` names it."""

    socket_dir: Path
    user: str = ADMIN
    password: str = PASSWORD

    def url(self, *, password: str | None = None, database: str = "postgres") -> str:
        auth = f"{self.user}:{password}" if password is not None else self.user
        return f"postgresql://{auth}@/{database}?host={self.socket_dir}"


def _as_owner(argv: list[str]) -> list[str]:
    """`argv` run as `nobody` when we are root (PostgreSQL refuses to run as root)."""
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL 15")
    return [runuser, "-u", "nobody", "--", *argv]


@pytest.fixture(scope="session", autouse=True)
def _server_from_the_environment() -> None:
    """Start the postgres pass's server before `isolated_home` drops every HIPPO_* variable,
    so HIPPO_TEST_PG_URL / HIPPO_TEST_PGDATA choose it (tests/pgtest.py caches it)."""
    from tests.conftest import BACKEND

    if BACKEND == "postgres":
        from tests.pgtest import base_url

        base_url()


@pytest.fixture(scope="session")
def pg15() -> Iterator[Pg15]:
    """Debian's PostgreSQL 15 (no pgvector, password login), for the session."""
    initdb, pg_ctl = PG15_BIN / "initdb", PG15_BIN / "pg_ctl"
    if not (initdb.exists() and pg_ctl.exists()):
        pytest.skip(f"PostgreSQL 15 binaries not found in {PG15_BIN} (HIPPO_TEST_PG15_BIN)")
    root = Path(tempfile.mkdtemp(prefix="hippo-pg15-"))
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        for path in (root, pwfile):
            shutil.chown(path, "nobody")
    data = root / "data"
    try:
        subprocess.run(_as_owner([str(initdb), "-D", str(data), "-U", ADMIN, "-E", "UTF8",
                                  "--auth=scram-sha-256", f"--pwfile={pwfile}", "--no-sync"]),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(_as_owner([str(pg_ctl), "-D", str(data), "-l", str(root / "log"), "-w",
                                  "-o", f"-k {root} -c listen_addresses='' -c fsync=off",
                                  "start"]), check=True, capture_output=True, timeout=120)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"PostgreSQL 15 did not start: {exc.stderr.decode(errors='replace')[-300:]}")
    try:
        yield Pg15(root)
    finally:
        subprocess.run(_as_owner([str(pg_ctl), "-D", str(data), "-m", "immediate", "-w",
                                  "stop"]), check=False, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never answers: a server
    that hangs (only a connect deadline ends the wait)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)  # never accepted: the kernel completes the handshake, nobody replies
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@pytest.fixture
def closed_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def scram() -> Iterator[object]:
    """A server of the team-store tests' own, with password logins (tests/postgres/scram.py)."""
    from tests.postgres.scram import bin_dir, scram_server

    if not (bin_dir() / "initdb").exists():
        pytest.skip(f"pgserver's binaries not found in {bin_dir()}")
    try:
        server = scram_server()
        started = server.__enter__()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        yield started
    finally:
        server.__exit__(None, None, None)
