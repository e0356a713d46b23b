"""`hippo mcp` as a client runs it: a real subprocess spoken to over stdio, through the
SDK's own `stdio_client` + `ClientSession`, and byte for byte for what stdout may carry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from hippo.store import connect
from tests.mcp.conftest import DECISION, data, hold_write_lock, text_of


def server_env(db_path: Path, home: Path, **extra: str) -> dict[str, str]:
    return {"HIPPO_HOME": str(home), "HIPPO_DB": str(db_path), "HIPPO_EMBEDDER": "hash",
            "HIPPO_PROJECT": "alpha", "HIPPO_NO_PROGRESS": "1", **extra}


def test_a_session_over_stdio(seeded: Path, isolated_home: Path, tmp_path: Path) -> None:
    """The acceptance walk: list, remember, search, echo, context, get with provenance,
    supersede, bad arguments, a locked database, then EOF ends the server cleanly."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    config = tmp_path / "config.toml"
    config.write_text("[mcp]\nbusy_retry_seconds = 0.2\n")
    env = server_env(seeded, isolated_home, HIPPO_CONFIG=str(config),
                     HIPPO_BUSY_TIMEOUT_MS="50")
    params = StdioServerParameters(command=sys.executable, args=["-m", "hippo", "mcp"],
                                   env=env, cwd=str(tmp_path))
    errlog = (tmp_path / "stderr.txt").open("w")
    out: dict[str, Any] = {}

    async def run() -> None:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = [t.name for t in (await session.list_tools()).tools]

            async def call(name: str, args: dict[str, Any]) -> Any:
                return await session.call_tool(name, args)

            out["remember"] = await call("remember", {"text": "Release builds are signed with "
                                                      "the YubiKey on the build box",
                                                      "type": "procedure"})
            out["search"] = await call("search", {"query": "how are release builds signed"})
            out["echo"] = await call("echo", {"query": "PostgreSQL event store"})
            out["context"] = await call("context", {"route": True})
            out["get"] = await call("get", {"id": 1})
            out["supersede"] = await call("supersede", {"old_id": 1, "text": "We moved the "
                                                        "event store to ClickHouse."})
            out["bad"] = await call("search", {"query": "x", "limit": 0})
            out["bad_type"] = await call("get", {"id": "one"})
            started, release = threading.Event(), threading.Event()

            holder = threading.Thread(target=hold_write_lock, args=(seeded, started, release))
            holder.start()
            assert started.wait(30)
            out["locked"] = await call("remember", {"text": "blocked", "type": "fact"})
            out["read_while_locked"] = await call("search", {"query": "ClickHouse"})
            release.set()
            holder.join()
            out["after"] = await call("remember", {"text": "written once the lock is gone",
                                                   "type": "fact"})

    anyio.run(run)
    errlog.close()
    assert out["tools"] == ["search", "remember", "echo", "context", "get", "supersede",
                            "forget", "done", "verify"]
    assert data(out["remember"])["action"] == "added"
    new_id = data(out["remember"])["id"]
    assert data(out["search"])["results"][0]["id"] == new_id
    (chunk,) = data(out["echo"])["results"]
    assert chunk["session"] == "alpha-1" and "lines 1-3" in chunk["where"]
    assert "Release builds are signed" in data(out["context"])["text"]  # guidance (procedure)
    got = data(out["get"])
    assert got["text"] == DECISION and "from session alpha-1" in got["provenance"]
    assert "we decided to use PostgreSQL" in got["sources"][0]["text"]
    assert data(out["supersede"])["old"] == 1
    assert text_of(out["bad"]) == "hippo: limit must be between 1 and 50, got 0"
    assert text_of(out["bad_type"]).startswith("hippo: get: id: Input should be a valid "
                                               "integer")
    assert out["locked"].is_error and " is busy (another hippo is writing)" in \
        text_of(out["locked"])
    assert not out["read_while_locked"].is_error
    assert data(out["after"])["action"] == "added"
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in stderr


NOISE = """
import os, subprocess, sys, threading, time

def noise():
    # Once the server is serving (its SDK side is imported after stdio is claimed), print
    # the way a chatty dependency or a child process would.
    while "hippo.mcp.server" not in sys.modules:
        time.sleep(0.001)
    for _ in range(20):
        print("noise from print")
        sys.stdout.flush()
        os.write(1, b"noise on fd 1\\n")
        subprocess.run(["echo", "noise from a child"])
        time.sleep(0.01)

threading.Thread(target=noise, daemon=True).start()
"""


def _frames(proc: subprocess.Popen, n: int) -> list[dict[str, Any]]:
    """Read `n` response frames; every stdout line must be JSON-RPC."""
    assert proc.stdout is not None
    frames = []
    while len(frames) < n:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        msg = orjson.loads(line)  # a stray line here fails the test
        assert msg["jsonrpc"] == "2.0"
        if "id" in msg:
            frames.append(msg)
    return frames


def _start(db_path: Path, home: Path, tmp_path: Path, **extra: str) -> subprocess.Popen:
    env = {**os.environ, **server_env(db_path, home, **extra)}
    return subprocess.Popen([sys.executable, "-m", "hippo", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=(tmp_path / "err.txt").open("w"),
                            env=env, cwd=tmp_path)


def _send(proc: subprocess.Popen, *messages: dict[str, Any]) -> None:
    assert proc.stdin is not None
    for m in messages:
        proc.stdin.write(orjson.dumps({"jsonrpc": "2.0", **m}) + b"\n")
    proc.stdin.flush()


INIT = {"id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
INITIALIZED = {"method": "notifications/initialized"}


def test_stdout_carries_only_protocol_messages(db_path: Path, isolated_home: Path,
                                               tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NOISE)
    proc = _start(db_path, isolated_home, tmp_path, PYTHONPATH=str(site))
    _send(proc, INIT, INITIALIZED)
    (init,) = _frames(proc, 1)
    assert init["result"]["serverInfo"]["name"] == "hippo"
    for i in range(2, 12):
        _send(proc, {"id": i, "method": "tools/call", "params": {
            "name": "remember", "arguments": {"text": f"note {i}", "type": "fact"}}})
        (res,) = _frames(proc, 1)
        assert res["id"] == i and not res["result"].get("isError"), res
        time.sleep(0.03)
    assert proc.stdin is not None
    proc.stdin.close()  # EOF
    assert proc.wait(timeout=30) == 0
    assert proc.stdout is not None and proc.stdout.read() == b""
    err = (tmp_path / "err.txt").read_text()
    assert "noise from print" in err and "noise on fd 1" in err and "noise from a child" in err


def test_the_local_model_warms_in_the_background(db_path: Path, isolated_home: Path,
                                                 tmp_path: Path) -> None:
    """With the real local model: initialize and tools/list are answered while the model
    loads in the background, and the first search waits for it and works."""
    proc = _start(db_path, isolated_home, tmp_path, HIPPO_EMBEDDER="local")
    _send(proc, INIT, INITIALIZED, {"id": 2, "method": "tools/list"})
    init, listed = _frames(proc, 2)
    assert init["id"] == 1 and listed["id"] == 2
    _send(proc, {"id": 3, "method": "tools/call", "params": {
        "name": "search", "arguments": {"query": "anything"}}})
    (res,) = _frames(proc, 1)
    assert res["id"] == 3 and not res["result"].get("isError"), res
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


def test_sigterm_ends_the_server_cleanly(db_path: Path, isolated_home: Path,
                                         tmp_path: Path) -> None:
    proc = _start(db_path, isolated_home, tmp_path)
    _send(proc, INIT, INITIALIZED, {"id": 2, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"text": "kept after SIGTERM", "type": "fact"}}})
    _frames(proc, 2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert "Traceback" not in (tmp_path / "err.txt").read_text()
    db = connect(db_path)
    assert db.scalar("SELECT text FROM memories") == "kept after SIGTERM"
    db.close()
