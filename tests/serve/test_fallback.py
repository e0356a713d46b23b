"""Clients never depend on the server: on every failure the call runs in the client's own
process, with the output it has without a server."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hippo.serve import address, client, spawn, wire
from tests.serve.conftest import Embeddings
from tests.serve.helpers import calls, files, gone, hippo, off, same, seed, serving, status

TEXTS = ("the deploy script needs the staging token from vault",
         "pytest fixtures share the database through a session scope")
QUERY = ("search", "deploy staging token", "--json")
ROOT = pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand a file to another user")


@pytest.fixture
def no_auto_start(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text(
        "[serve]\nauto_start = false\n[search]\nw_relevance = 0.85\nw_importance = 0.15\n"
        "w_freshness = 0.0\n")


def test_no_server_runs_the_call_here(db_path: Path | str, no_auto_start: None) -> None:
    seed(db_path, TEXTS)
    same(hippo(db_path, *QUERY), hippo(db_path, *QUERY, env=off()))
    assert status(db_path) is None


def _stale_socket(path: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.close()  # the file stays, nobody listens: a server that was killed


def test_a_stale_socket_file(db_path: Path | str, no_auto_start: None,
                             isolated_home: Path) -> None:
    seed(db_path, TEXTS)
    _stale_socket(files(db_path)["sock"])
    same(hippo(db_path, *QUERY), hippo(db_path, *QUERY, env=off()))
    (isolated_home / "config.toml").write_text("")  # auto_start back on
    hippo(db_path, *QUERY)
    assert spawn.wait_for(files(db_path), up=True, timeout=60)  # it replaced the stale one
    pid = status(db_path)["pid"]
    assert hippo(db_path, "serve", "--stop").returncode == 0 and gone(pid)


@pytest.mark.parametrize("what", ["hippo", "protocol"])
def test_a_newer_client_falls_back_and_the_server_leaves(
        db_path: Path | str, no_auto_start: None, monkeypatch: pytest.MonkeyPatch,
        what: str) -> None:
    seed(db_path, TEXTS)
    with serving(db_path) as proc:
        if what == "hippo":
            monkeypatch.setattr(client, "VERSION", "99.0.0")
        else:
            monkeypatch.setattr(wire, "PROTOCOL", wire.PROTOCOL + 1)
        outcome = client.run(["--db", str(db_path), *QUERY])
        assert outcome.code is None and outcome.reason == "version"
        assert proc.wait(15) == 0  # a newer hippo was installed: make way for its server
        assert b"a client of hippo" in proc.stderr.read()  # type: ignore[union-attr]


@pytest.mark.parametrize("what", ["hippo", "protocol"])
def test_an_older_client_falls_back_and_the_server_stays(
        db_path: Path | str, no_auto_start: None, monkeypatch: pytest.MonkeyPatch,
        what: str) -> None:
    """Two installs of different versions must not stop each other's server in turn."""
    seed(db_path, TEXTS)
    with serving(db_path) as proc:
        with monkeypatch.context() as patch:
            if what == "hippo":
                patch.setattr(client, "VERSION", "0.0.1")
            else:
                patch.setattr(wire, "PROTOCOL", wire.PROTOCOL - 1)
            outcome = client.run(["--db", str(db_path), *QUERY])
        assert outcome.code is None and outcome.reason == "version"
        time.sleep(1.0)
        assert proc.poll() is None and status(db_path)["refused"] == {"version": 1}


def test_a_server_busy_past_the_deadline(db_path: Path | str, no_auto_start: None) -> None:
    seed(db_path, TEXTS)
    with serving(db_path) as proc:
        before = calls(db_path)
        os.kill(proc.pid, signal.SIGSTOP)  # busy: it answers nothing for now
        try:
            started = time.monotonic()
            stalled = hippo(db_path, *QUERY)
            waited = time.monotonic() - started
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        same(stalled, hippo(db_path, *QUERY, env=off()))
        assert waited < 20  # it gave up on the server, it did not hang on it
        time.sleep(0.5)  # the server wakes, finds the call's deadline passed, skips it
        assert calls(db_path) == before
        assert hippo(db_path, *QUERY).returncode == 0 and calls(db_path) == before + 1


def test_the_server_killed_mid_call(db_path: Path | str, no_auto_start: None,
                                    embeddings: Embeddings) -> None:
    seed(db_path, TEXTS, embedder="openai")
    query = ("search", "which token does the deploy script need", "--json")
    with serving(db_path) as proc:
        embeddings.arrived.clear()
        embeddings.release.clear()  # the server's call waits on the query's embedding
        call = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db_path), *query],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                env={k: v for k, v in os.environ.items() if k != "HIPPO_SERVE"})
        assert embeddings.arrived.wait(30)  # the call is running in the server
        proc.kill()
        proc.wait(15)
        embeddings.release.set()
        out, err = call.communicate(timeout=60)
    alone = hippo(db_path, *query, env=off())
    assert (call.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert b"staging token" in out


def test_a_hook_whose_served_call_stalls_runs_itself(db_path: Path | str, no_auto_start: None,
                                                    embeddings: Embeddings,
                                                    tmp_path: Path) -> None:
    """A served hook that has not finished in HOOK_FINISH_S runs itself, well inside the
    agent's own timeout, with the output it has without a server."""
    seed(db_path, TEXTS, embedder="openai")
    cwd = tmp_path / "testproj"
    cwd.mkdir()
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(cwd),
                          "prompt": "which token does the staging deploy need?"}).encode()
    with serving(db_path):
        embeddings.requests = 0
        embeddings.release.clear()  # the server's call stalls on the prompt's embedding...
        embeddings.release_at = 2  # ...until the client's own run asks for it too
        started = time.monotonic()
        stalled = hippo(db_path, "hook", "claude-code", "prompt", input=payload)
        waited = time.monotonic() - started
    embeddings.release_at = 0
    assert client.HOOK_FINISH_S <= waited < client.HOOK_FINISH_S + 20
    alone = hippo(db_path, "hook", "claude-code", "prompt", input=payload, env=off())
    same(stalled, alone)
    assert b"staging token" in stalled.stdout


@ROOT
def test_a_socket_of_another_user_is_not_trusted(db_path: Path | str,
                                                 no_auto_start: None) -> None:
    seed(db_path, TEXTS)
    with serving(db_path):
        before = calls(db_path)
        os.chown(files(db_path)["sock"], 65534, 65534)
        same(hippo(db_path, *QUERY), hippo(db_path, *QUERY, env=off()))
        assert client.run(["--db", str(db_path), *QUERY]).reason == "owner"
        os.chown(files(db_path)["sock"], 0, 0)
        assert calls(db_path) == before


@ROOT
def test_another_user_cannot_reach_the_server(db_path: Path | str, no_auto_start: None) -> None:
    seed(db_path, TEXTS)
    with serving(db_path):
        probe = ("import socket, sys; s = socket.socket(socket.AF_UNIX); "
                 "s.settimeout(2)\ntry:\n s.connect(sys.argv[1]); print('connected')\n"
                 "except OSError as e:\n print(type(e).__name__)")
        python = "/usr/bin/python3"  # the test's own may sit in a directory only root reads
        if not os.access(python, os.X_OK):
            pytest.skip("no system python for another user")
        out = subprocess.run([python, "-c", probe, files(db_path)["sock"]], cwd="/",
                             capture_output=True, text=True, timeout=30, check=False,
                             user=65534, group=65534)
        assert out.stdout.strip() == "PermissionError"


def test_a_call_for_another_database_is_refused(db_path: Path | str, tmp_path: Path) -> None:
    seed(db_path, TEXTS)
    with serving(db_path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(files(db_path)["sock"])
        request = {"protocol": wire.PROTOCOL, "hippo": client.VERSION, "op": "run",
                   "argv": ["--db", str(tmp_path / "other.db"), *QUERY],
                   "cwd": str(tmp_path), "env": dict(os.environ),
                   "start_by": time.time() + 5, "streams": {}, "stdin": False}
        wire.send_json(sock, request)
        assert wire.recv_json(sock, time.monotonic() + 10) == {"refused": "database"}
        sock.close()


def test_a_frame_that_is_not_json_is_dropped(db_path: Path | str) -> None:
    seed(db_path, TEXTS)
    with serving(db_path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(files(db_path)["sock"])
        sock.sendall(struct.pack(">I", 5) + b"\xff{not")
        sock.settimeout(10)
        assert sock.recv(16) == b""  # closed, nothing said
        sock.close()
        assert hippo(db_path, *QUERY).returncode == 0 and calls(db_path) >= 1


@pytest.mark.sqlite_only(reason="replaces the database file")
def test_a_replaced_database_file(db_path: Path, tmp_path: Path, no_auto_start: None) -> None:
    seed(db_path, TEXTS[:1])
    other = tmp_path / "other.db"
    seed(other, ("the cache warms up from the nightly snapshot",))
    with serving(db_path):
        assert b"staging token" in hippo(db_path, *QUERY).stdout
        os.replace(other, db_path)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(db_path) + suffix):
                os.unlink(str(db_path) + suffix)
        before = calls(db_path)
        after = hippo(db_path, "search", "nightly snapshot cache", "--json")
        assert calls(db_path) == before + 1
        assert b"nightly snapshot" in after.stdout and b"staging token" not in after.stdout


@ROOT
def test_a_runtime_directory_of_another_user(db_path: Path | str, no_auto_start: None) -> None:
    seed(db_path, TEXTS)
    base = address.directory()
    os.makedirs(base, mode=0o700, exist_ok=True)
    os.chown(base, 65534, 65534)
    try:
        refused = hippo(db_path, "serve")
        assert refused.returncode == 78 and b"another user" in refused.stderr
        same(hippo(db_path, *QUERY), hippo(db_path, *QUERY, env=off()))
    finally:
        os.chown(base, 0, 0)


def test_a_loose_runtime_directory_is_tightened(db_path: Path | str) -> None:
    seed(db_path, TEXTS)
    base = address.directory()
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    with serving(db_path):
        assert os.stat(base).st_mode & 0o777 == 0o700
        assert os.stat(files(db_path)["sock"]).st_mode & 0o777 == 0o600




def test_an_argv_read_two_ways_is_not_served(db_path: Path | str, tmp_path: Path,
                                             no_auto_start: None) -> None:
    """`search --db A --project --db B`: Click reads --db A (and project "--db"); a quick
    reading of the last --db would ask B's server. B's server must not run it."""
    other = tmp_path / "b.db"
    seed(db_path, TEXTS)
    seed(other, TEXTS[1:])
    argv = ("search", "--db", str(db_path), "--project", "--db", str(other), "--json")
    with serving(other):
        before = calls(other)
        served = hippo(other, *argv)
        assert calls(other) == before
    same(served, hippo(other, *argv, env=off()))
