"""Each served call has its own stdout and stderr: nothing another connection causes, nor
anything another thread of the server writes, reaches a client (`hippo.serve.execute`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hippo.serve import client, execute, wire
from tests.serve.conftest import Embeddings
from tests.serve.helpers import files, off, same, seed, serving

QUERY = ("search", "which token does the deploy script need", "--json")


@pytest.fixture
def no_auto_start(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text(  # (no freshness: the same scores later)
        "[serve]\nauto_start = false\n[search]\nw_relevance = 0.85\nw_importance = 0.15\n"
        "w_freshness = 0.0\n")


def _bad_request(db: Path | str) -> None:
    """A second connection whose request fails in the server (start_by is no number)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(files(db)["sock"])
    wire.send_json(sock, {"protocol": wire.PROTOCOL, "hippo": client.VERSION, "op": "run",
                          "argv": list(QUERY), "start_by": "not a number", "stdin": False})
    sock.settimeout(10)
    assert sock.recv(16) == b""  # dropped, not a word
    sock.close()


def test_another_connections_failure_stays_out_of_a_calls_stderr(
        db_path: Path | str, no_auto_start: None, embeddings: Embeddings) -> None:
    seed(db_path, ["the deploy script needs the staging token from vault"],
         embedder="openai")
    with serving(db_path) as proc:
        embeddings.arrived.clear()
        embeddings.release.clear()  # the served call waits on its query's embedding
        call = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db_path), *QUERY],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                env={k: v for k, v in os.environ.items() if k != "HIPPO_SERVE"})
        assert embeddings.arrived.wait(30)  # running in the server now
        _bad_request(db_path)  # while it runs, another connection fails
        embeddings.release.set()
        out, err = call.communicate(timeout=60)
        proc.terminate()
        log = proc.communicate(timeout=30)[1]
    alone = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db_path), *QUERY],
                           capture_output=True, env=off(), timeout=60, check=False)
    same(subprocess.CompletedProcess([], call.returncode, out, err), alone)
    assert b"staging token" in out and b"Traceback" not in err
    assert b"request was dropped: ValueError" in log  # the server's own log says it


def test_a_thread_writes_to_its_own_calls_streams(capfd: pytest.CaptureFixture[str]) -> None:
    """In-process: two calls at once each get only their own writes (through their
    environment); another thread's write goes to the process's own stderr, whose
    streams no call replaced."""
    import hippo.cli.main

    both = threading.Barrier(3)
    saved = sys.stdin, sys.stdout, sys.stderr

    def main(argv: list[str], env: Any = None, serve: bool = True) -> None:
        env.stdout.write(f"out {argv[-1]}\n")
        both.wait(10)  # all three threads are writing at the same time
        env.stderr.write(f"err {argv[-1]}\n")
        assert (sys.stdin, sys.stdout, sys.stderr) == saved
        time.sleep(0.05)
        env.stdout.write(f"more {argv[-1]}\n")

    face = execute.Face(main, hippo.cli.main._app)  # what `hippo serve` hands its server
    results: dict[str, tuple[int, bytes, bytes, list[list[int]]]] = {}

    def call(name: str) -> None:
        results[name] = execute.run({"argv": ["search", name], "env": dict(os.environ),
                                     "cwd": os.getcwd(), "streams": {}}, b"", face=face)

    try:
        threads = [threading.Thread(target=call, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        both.wait(10)
        sys.stderr.write("the server's own line\n")
        for t in threads:
            t.join(10)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    assert results["a"][:3] == (0, b"out a\nmore a\n", b"err a\n")
    assert results["b"][:3] == (0, b"out b\nmore b\n", b"err b\n")
    assert results["a"][3] == [[1, 6], [0, 13]]  # stderr written through, stdout at the end
    assert "the server's own line" in capfd.readouterr().err


MERGED_TEXTS = ("the deploy script needs the staging token from vault",
                "pytest fixtures share the database through a session scope")


def _merged(db: Path | str, env: dict[str, str], *args: str) -> tuple[int, bytes]:
    """The call with stdout and stderr on one pipe (`2>&1`)."""
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), *args],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env, timeout=120, check=False)
    return out.returncode, out.stdout


@pytest.mark.parametrize("threads", ["", "zero"])
def test_merged_streams_and_a_bad_thread_count_print_the_same(
        db_path: Path | str, no_auto_start: None, threads: str) -> None:
    """With stdout and stderr on one pipe, a degraded search's note comes where it comes
    without a server (before the results); a bad HIPPO_THREADS degrades both alike."""
    from tests.serve.helpers import calls, env_on, hippo

    seed(db_path, MERGED_TEXTS, embedder="local")
    query = ("search", "which token does the staging deploy need", "--json")
    extra = {"HIPPO_THREADS": threads} if threads else {}
    # (first without a server: a served call that embedded the query would cache it, and
    # the call alone would then not need the model)
    alone = _merged(db_path, off(**extra), *query)
    alone_split = hippo(db_path, *query, env=off(**extra))
    with serving(db_path):
        before = calls(db_path)
        served = _merged(db_path, env_on(**extra), *query)
        split = hippo(db_path, *query, env=env_on(**extra))
        # A HIPPO_THREADS other than the server's: the client runs the call itself
        # (`execute.PROCESS_READ`: the model's threads are read from the process).
        assert calls(db_path) == before + (0 if threads else 2)
    assert served == alone
    same(split, alone_split)
    if threads:
        assert b"HIPPO_THREADS" in alone[1] and alone[1].index(b"HIPPO_THREADS") < \
            alone[1].index(b"staging token")
