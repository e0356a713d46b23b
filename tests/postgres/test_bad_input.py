"""Bad input against real servers: each is one clear line on stderr, nothing on stdout,
and the documented exit code (78 configuration, 75 a server that is down), with the
password never in any output. Runs on the postgres pass only (it needs servers whatever
the backend; `db_path` is a fresh schema on pgserver's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.conftest import Result
from tests.postgres.conftest import PASSWORD, Pg15

pytestmark = [pytest.mark.postgres_only(reason="needs PostgreSQL servers (the postgres pass)"),
              pytest.mark.usefixtures("db_path")]

SECRET = "Url-pw-never-shown"


def one_line(r: Result | subprocess.CompletedProcess[str], code: int, start: str) -> str:
    """The single stderr line of a failed command, checked: its exit code, nothing on
    stdout, and no password anywhere."""
    stderr = r.stderr
    assert (r.exit_code if isinstance(r, Result) else r.returncode) == code, stderr
    assert r.stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(start), lines[0]
    for secret in (SECRET, PASSWORD, "Traceback"):
        assert secret not in stderr
    return lines[0]


@pytest.mark.parametrize("url", [
    f"postgresql://alice:{SECRET}@[::1/hippo",                 # an unclosed IPv6 host
    f"postgresql://alice:{SECRET}%zz@127.0.0.1:1/hippo",         # a bad %-escape in the password
    f"postgresql://alice:{SECRET}@127.0.0.1:1/hippo?sslmode=sometimes",
    f"postgresql://alice:{SECRET}@127.0.0.1:5432:5432/hippo",  # a port that is no number
    f"postgresql://alice:{SECRET}@127.0.0.1:1/hippo?port=five",
    f"postgresql://alice:{SECRET}@127.0.0.1:1/hippo?colour=blue",  # no such option
    f"postgresql://alice@127.0.0.1:1/hippo?password={SECRET}&sslmode",
])
@pytest.mark.parametrize("command", [("add", "a memory"), ("search", "memory")])
def test_a_malformed_url_is_78(cli, url: str, command: tuple[str, ...]) -> None:
    r = cli(*command, db=url)
    one_line(r, 78, "hippo: not a valid PostgreSQL URL: postgres")


def test_a_server_that_is_down_is_75(cli, closed_port: int, tmp_path: Path) -> None:
    for url in (f"postgresql://alice:{SECRET}@127.0.0.1:{closed_port}/hippo",
                f"postgresql://alice@/hippo?host={tmp_path}"):  # a socket dir, no server
        for command in (("add", "a memory"), ("search", "memory"), ("stats",)):
            line = one_line(cli(*command, db=url), 75, "hippo: cannot reach PostgreSQL at ")
            assert "is the server up?" in line


def test_a_server_that_never_answers_ends_at_the_connect_deadline(silent_port: int) -> None:
    """No PGCONNECT_TIMEOUT: hippo's own deadline (seconds) ends the wait; without one the
    command would wait forever (the process's timeout here only guards the test)."""
    env = {k: v for k, v in os.environ.items() if k != "PGCONNECT_TIMEOUT"}
    url = f"postgresql://alice:{SECRET}@127.0.0.1:{silent_port}/hippo"
    r = subprocess.run([sys.executable, "-m", "hippo", "--db", url, "add", "a memory"],
                       capture_output=True, text=True, env=env, timeout=90, check=False)
    line = one_line(r, 75, f"hippo: cannot reach PostgreSQL at postgresql://alice@127.0.0.1:"
                           f"{silent_port}/hippo (")
    assert "timeout" in line.lower()


def test_a_wrong_password_is_78_and_never_shown(cli, pg15: Pg15, tmp_path: Path) -> None:
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"*:*:*:{pg15.user}:{SECRET}\n")
    pgpass.chmod(0o600)
    attempts = [
        (pg15.url(password=SECRET), {}),                  # in the URL
        (pg15.url(), {"PGPASSWORD": SECRET}),             # in the environment
        (pg15.url(), {"PGPASSFILE": str(pgpass)}),        # in ~/.pgpass
        (pg15.url(), {"PGPASSWORD": ""}),                 # none at all
    ]
    for url, env in attempts:
        for command in (("add", "a memory"), ("search", "memory")):
            line = one_line(cli(*command, db=url, env=env), 78,
                            f"hippo: PostgreSQL at {pg15.url()} refused the login (")
            assert "check the user and password" in line


def test_a_role_that_does_not_exist_and_a_missing_database_are_78(cli, pg15: Pg15) -> None:
    nobody = pg15.url(password=SECRET).replace(pg15.user, "no_such_role", 1)
    one_line(cli("add", "a memory", db=nobody), 78, "hippo: PostgreSQL at postgresql://"
                                                    "no_such_role@/postgres")
    missing = pg15.url(password=PASSWORD, database="no_such_db")
    line = one_line(cli("add", "a memory", db=missing), 78,
                    f"hippo: PostgreSQL at {pg15.url(database='no_such_db')}: ")
    assert 'database "no_such_db" does not exist' in line


def test_a_database_without_pgvector_is_78(cli, pg15: Pg15, tmp_path: Path) -> None:
    """The login works each way a user gives a password (URL, PGPASSWORD, ~/.pgpass,
    PGSERVICE), and the missing extension is what is said; nothing is created."""
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"*:*:*:{pg15.user}:{PASSWORD}\n")
    pgpass.chmod(0o600)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[team]\nhost={pg15.socket_dir}\nuser={pg15.user}\n"
                        f"password={PASSWORD}\ndbname=postgres\n")
    attempts = [
        (pg15.url(password=PASSWORD), {}),
        (pg15.url(), {"PGPASSWORD": PASSWORD}),
        (pg15.url(), {"PGPASSFILE": str(pgpass)}),
        ("postgresql://?service=team", {"PGSERVICEFILE": str(services)}),
    ]
    for url, env in attempts:
        shown = url.replace(f":{PASSWORD}@", "@")
        line = one_line(cli("add", "a memory", db=url, env=env), 78,
                        f"hippo: PostgreSQL at {shown} has no pgvector extension")
        assert "install pgvector" in line
    with psycopg.connect(pg15.url(password=PASSWORD)) as conn:
        assert conn.execute("SELECT to_regclass('meta'), to_regclass('_migrations')"
                            ).fetchone() == (None, None)
    # A read command finds no store there: nothing stored yet, not an error.
    r = cli("search", "memory", db=pg15.url(password=PASSWORD))
    assert r.exit_code == 0, r.stderr
    assert "no hippo store yet" in r.stderr


def test_a_schema_newer_than_this_hippo_is_78(cli, db_path: str) -> None:
    from hippo.store import connect

    connect(db_path).close()  # hippo's schema, as this hippo writes it
    with psycopg.connect(db_path, autocommit=True) as conn:
        conn.execute("INSERT INTO _migrations(name, applied_at) "
                     "VALUES ('p9999_from_the_future', '2999-01-01T00:00:00.000Z')")
    for command in (("add", "another memory"), ("search", "deploy"), ("list",), ("stats",)):
        line = one_line(cli(*command), 78, "hippo: database postgresql://")
        assert "schema step 'p9999_from_the_future', newer than this hippo" in line
    with psycopg.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
