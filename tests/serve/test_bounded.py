"""Servers do not pile up: one automatic server per user, none for a database that does not
exist, none left once its database is gone; runtime files go with their servers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hippo.serve import address, spawn
from tests.serve.helpers import env_on, files, gone, hippo, seed, status

pytestmark = pytest.mark.sqlite_only(reason="database files that come and go")


def servers() -> list[int]:
    """Every `hippo serve` process of this test (its runtime directory in its
    environment), running or still starting."""
    mine = f"XDG_RUNTIME_DIR={os.environ['XDG_RUNTIME_DIR']}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if b"hippo" in argv and b"serve" in argv and mine in env:
            found.append(int(pid))
    return found


def settle(most: int, timeout: float = 90) -> list[int]:
    """Wait until at most `most` servers run (and none is still starting up to make way)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        now = servers()
        if len(now) <= most and all(status_of(pid) for pid in now):
            return now
        time.sleep(0.2)
    return servers()


def status_of(pid: int) -> bool:
    """Whether server `pid` is up (its info file written): one that is still starting may
    yet make another stop."""
    import glob
    import json

    for info in glob.glob(os.path.join(address.directory(), "*.json")):
        try:
            if json.loads(Path(info).read_text())["pid"] == pid:
                return True
        except (OSError, ValueError, KeyError):
            continue
    return False


def test_ten_databases_leave_one_server_and_none_once_deleted(tmp_path: Path) -> None:
    dbs = [tmp_path / f"db{i}" / "hippo.db" for i in range(10)]
    for db in dbs:
        db.parent.mkdir()
        seed(db, [f"the fact of database {db.parent.name}"])
    for db in dbs:
        out = hippo(db, "search", "fact of database", "--json")
        assert out.returncode == 0 and db.parent.name.encode() in out.stdout
    left = settle(1)
    assert len(left) <= 1, left
    for db in dbs:
        for path in db.parent.iterdir():
            path.unlink()
        db.parent.rmdir()
    assert all(gone(pid, timeout=30) for pid in left)
    assert servers() == []
    runtime = Path(address.directory())
    time.sleep(0.5)
    assert not list(runtime.glob("*.sock")) and not list(runtime.glob("*.json"))
    assert not list(runtime.glob("db-*.lock"))


def test_no_server_for_a_database_that_does_not_exist(tmp_path: Path) -> None:
    db = tmp_path / "typo.db"
    out = hippo(db, "search", "anything", "--json")
    assert out.returncode == 0 and out.stdout == b""
    time.sleep(1.0)
    assert servers() == [] and not db.exists()
    assert not os.path.exists(files(db)["spawn"])


def test_status_reports_rss_and_a_stopped_servers_files_go(tmp_path: Path) -> None:
    db = tmp_path / "hippo.db"
    seed(db, ["the deploy script needs the staging token"])
    up = hippo(db, "serve", "--detach", "--idle-minutes", "5")
    assert up.returncode == 0, up.stderr
    report = status(db)
    assert report is not None and report["rss_mb"] > 10 and report["auto"] is False
    piped = hippo(db, "serve", "--status", env=env_on())  # JSON when piped
    assert b'"rss_mb":' in piped.stdout
    assert hippo(db, "serve", "--stop").returncode == 0
    assert gone(report["pid"])
    base = Path(files(db)["dir"])
    assert not list(base.glob("db-*.lock")) and not list(base.glob("*.sock"))


def test_sweep_removes_what_servers_gone_long_ago_left(tmp_path: Path) -> None:
    base = files(tmp_path / "x.db")["dir"]
    address.check(base, create=True)
    old = time.time() - spawn.RESPAWN_S - 5
    for name in ("k1.spawn", "k1.log", "k2.spawn", "db-abc.lock"):
        Path(base, name).write_text("")
    os.utime(Path(base, "k1.spawn"), (old, old))
    spawn.sweep(base)
    assert sorted(os.listdir(base)) == ["k2.spawn"]  # k2's start is recent: kept
