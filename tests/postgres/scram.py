"""A PostgreSQL 16 + pgvector of the team-store tests' own: pgserver's binaries, a new data
directory whose pg_hba asks every role for its password (scram-sha-256), a unix socket only.

The shared test server (tests/pgtest.py) trusts every login; a member's privacy is only
worth testing where a role must prove who it is. Its superuser (`ADMIN`) runs `hippo team`;
each test makes a database and roles of unique names and drops them after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

ADMIN = "hippo_admin"
ADMIN_PASSWORD = "Scram-admin-s3cret"


def bin_dir() -> Path:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
        from pgserver._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


def _prepare_root() -> None:
    """As root: pgserver's system user, and its binaries readable by it (what pgserver
    itself does before its first start)."""
    import stat
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )
    ensure_user_exists("pgserver")
    ensure_prefix_permissions(bin_dir())
    read, run = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
    ensure_folder_permissions(bin_dir(), read | run)
    ensure_folder_permissions(bin_dir().parent / "lib", read)


def _as_owner(argv: list[str]) -> list[str]:
    """`argv` run as pgserver's system user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "pgserver", "--", *argv]


@dataclass(frozen=True)
class ScramServer:
    socket_dir: Path

    def url(self, user: str = ADMIN, database: str = "postgres", *,
            password: str | None = None, schema: str | None = None) -> str:
        auth = f"{user}:{quote(password, safe='')}" if password is not None else user
        url = f"postgresql://{auth}@/{database}?host={self.socket_dir}"
        if schema:
            url += "&options=" + quote(f"-csearch_path={schema},public", safe="")
        return url

    def admin(self, database: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.url(database=database, password=ADMIN_PASSWORD),
                               autocommit=True)

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """A new database for one test (and every role made in it, dropped after)."""
        name = f"rls_{uuid.uuid4().hex[:10]}"
        with self.admin() as conn:
            roles_before = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles")}
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            with self.admin() as conn:
                conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                made = [r for (r,) in conn.execute("SELECT rolname FROM pg_roles").fetchall()
                        if r not in roles_before]
                if made:  # in one statement: grants among them go with them
                    conn.execute("DROP ROLE " + ", ".join(f'"{r}"' for r in made))


@contextlib.contextmanager
def scram_server() -> Iterator[ScramServer]:
    """Start the server (stopped and deleted afterwards)."""
    binaries = bin_dir()
    root = Path(tempfile.mkdtemp(prefix="hippo-scram-"))
    pwfile = root / "pw"
    pwfile.write_text(ADMIN_PASSWORD + "\n")
    if os.geteuid() == 0:
        _prepare_root()
        os.chmod(root, 0o755)
        for path in (root, pwfile):
            shutil.chown(path, "pgserver")
    data = root / "data"
    try:
        subprocess.run(_as_owner([str(binaries / "initdb"), "-D", str(data), "-U", ADMIN,
                                  "-E", "UTF8", "--auth=scram-sha-256", f"--pwfile={pwfile}",
                                  "--no-sync"]), check=True, capture_output=True, timeout=180)
        subprocess.run(_as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-l",
                                  str(root / "log"), "-w", "-o",
                                  f"-k {root} -c listen_addresses='' -c fsync=off", "start"]),
                       check=True, capture_output=True, timeout=180)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError("the scram server did not start: "
                           + exc.stderr.decode(errors="replace")[-300:]) from None
    try:
        yield ScramServer(root)
    finally:
        subprocess.run(_as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-m",
                                  "immediate", "-w", "stop"]),
                       check=False, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
