"""`hippo serve` as a user runs it: start, one per database, status, stop, idle exit,
signals, auto-start, and calls answered by it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippo.serve import client, spawn
from tests.serve.helpers import (
    calls,
    env_on,
    files,
    gone,
    hippo,
    off,
    seed,
    serving,
    status,
)

TEXTS = ("the deploy script needs the staging token from vault",
         "pytest fixtures share the database through a session scope",
         "wal mode lets readers run beside the one writer")


def test_client_version_is_hippos() -> None:
    from hippo import __version__

    assert client.VERSION == __version__


def test_a_search_is_served_and_sees_other_processes_writes(db_path: Path | str) -> None:
    seed(db_path, TEXTS[:2])
    with serving(db_path):
        before = calls(db_path)
        first = hippo(db_path, "search", "wal readers writer", "--json")
        assert first.returncode == 0 and calls(db_path) == before + 1
        assert b"wal mode" not in first.stdout
        seed(db_path, TEXTS[2:])  # another process writes
        second = hippo(db_path, "search", "wal readers writer", "--json")
        assert calls(db_path) == before + 2
        assert b"wal mode lets readers" in second.stdout
        found = [line for line in second.stdout.splitlines() if b"wal mode" in line]
        memory_id = __import__("json").loads(found[0])["id"]
        gone_ = hippo(db_path, "forget", str(memory_id), "--hard", env=off())
        assert gone_.returncode == 0, gone_.stderr
        third = hippo(db_path, "search", "wal readers writer", "--json")
        assert calls(db_path) == before + 3
        assert b"wal mode lets readers" not in third.stdout


def test_one_server_per_database(db_path: Path | str, tmp_path: Path) -> None:
    seed(db_path, TEXTS[:1])
    with serving(db_path) as first:
        again = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db_path), "serve"],
                               capture_output=True, env=env_on(), timeout=60, check=False)
        assert again.returncode == 0
        assert b"already running" in again.stderr and str(first.pid).encode() in again.stderr
        if isinstance(db_path, Path):  # the same file by another name: still one server
            other_name = tmp_path / "link.db"
            other_name.symlink_to(db_path)
            third = subprocess.run([sys.executable, "-m", "hippo", "--db", str(other_name),
                                    "serve"], capture_output=True, env=env_on(), timeout=60,
                                   check=False)
            assert third.returncode == 0 and b"already running" in third.stderr
        assert status(db_path)["pid"] == first.pid


def test_status_and_stop(db_path: Path | str) -> None:
    none = hippo(db_path, "serve", "--status")
    assert none.returncode == 1 and b"no server runs" in none.stderr
    seed(db_path, TEXTS[:1])
    with serving(db_path) as proc:
        report = hippo(db_path, "serve", "--status", "--json")
        assert report.returncode == 0
        info = __import__("json").loads(report.stdout)
        assert info["pid"] == proc.pid and info["protocol"] == 1
        assert "vectors" in info and "embedders" in info
        stop = hippo(db_path, "serve", "--stop")
        assert stop.returncode == 0 and b"stopped the server" in stop.stderr
        assert proc.wait(15) == 0
        assert not os.path.exists(files(db_path)["sock"])
    again = hippo(db_path, "serve", "--stop")
    assert again.returncode == 0 and b"no server runs" in again.stderr


def test_idle_exit(db_path: Path | str) -> None:
    seed(db_path, TEXTS[:1])
    with serving(db_path, idle_minutes=0.03) as proc:  # 1.8 s
        assert proc.wait(30) == 0
        assert b"idle for" in proc.stderr.read()  # type: ignore[union-attr]
        assert not os.path.exists(files(db_path)["sock"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_it_cleanly(db_path: Path | str, sig: signal.Signals) -> None:
    seed(db_path, TEXTS[:1])
    with serving(db_path) as proc:
        proc.send_signal(sig)
        assert proc.wait(15) == 0
        assert not os.path.exists(files(db_path)["sock"])


def test_a_removed_socket_file_ends_it(db_path: Path | str) -> None:
    seed(db_path, TEXTS[:1])
    with serving(db_path) as proc:
        os.unlink(files(db_path)["sock"])
        assert proc.wait(15) == 0


def test_detach_then_auto_start(db_path: Path | str) -> None:
    seed(db_path, TEXTS)
    up = hippo(db_path, "serve", "--detach", "--idle-minutes", "5")
    assert up.returncode == 0 and b"serving" in up.stderr
    pid = status(db_path)["pid"]
    twice = hippo(db_path, "serve", "--detach")
    assert twice.returncode == 0 and status(db_path)["pid"] == pid
    assert hippo(db_path, "serve", "--stop").returncode == 0
    assert gone(pid)
    # No server: the call runs here and starts one for the next call.
    first = hippo(db_path, "search", "deploy token", "--json")
    assert first.returncode == 0 and b"staging token" in first.stdout
    assert spawn.wait_for(files(db_path), up=True, timeout=60)
    pid = status(db_path)["pid"]
    end = time.monotonic() + 60
    while calls(db_path) < 1 and time.monotonic() < end:  # until the preload is done
        hippo(db_path, "search", "deploy token", "--json")
    assert calls(db_path) >= 1
    assert hippo(db_path, "serve", "--stop").returncode == 0
    assert gone(pid)


def test_auto_start_off(db_path: Path | str, isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("[serve]\nauto_start = false\n")
    seed(db_path, TEXTS[:1])
    first = hippo(db_path, "search", "deploy token", "--json")
    assert first.returncode == 0
    time.sleep(1.0)
    assert status(db_path) is None
    assert not os.path.exists(files(db_path)["spawn"])


def test_serving_off_by_environment(db_path: Path | str) -> None:
    seed(db_path, TEXTS[:1])
    with serving(db_path):
        before = calls(db_path)
        hippo(db_path, "search", "deploy token", "--json", env=off())
        assert calls(db_path) == before


def test_a_forgotten_session_is_gone_from_served_answers(db_path: Path | str,
                                                         tmp_path: Path) -> None:
    import orjson

    seed(db_path, TEXTS[:1])
    src = tmp_path / "chat.jsonl"
    src.write_bytes(orjson.dumps({"role": "user", "content": "the staging proxy wants the "
                                  "corporate CA bundle"}) + b"\n")
    ingest = hippo(db_path, "--embedder", "hash", "ingest", str(src), "--idle-minutes", "0",
                   "--format", "generic-jsonl", env=off())
    assert ingest.returncode == 0, ingest.stderr
    with serving(db_path):
        found = hippo(db_path, "echo", "corporate CA bundle proxy", "--json")
        assert b"CA bundle" in found.stdout
        session = orjson.loads(found.stdout.splitlines()[0])["session"]
        forget = hippo(db_path, "echo", "--forget-session", session, env=off())
        assert forget.returncode == 0, forget.stderr
        before = calls(db_path)
        after = hippo(db_path, "echo", "corporate CA bundle proxy", "--json")
        assert calls(db_path) == before + 1
        assert b"CA bundle" not in after.stdout
