"""Voyage rerank through the real `voyageai` client against a local server speaking its API.

Success reorders; a slow server times out at 800 ms; three failures open the breaker,
which a separate process then sees; a reached cap keeps the local order. Every fallback
is named in `degraded`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import hippo
from hippo.core import Hippo
from hippo.memory.records import from_input
from hippo.paid import spend
from hippo.retrieve.pipeline import search

TEXTS = [
    "Deploy the API with the blue-green script",
    "Deploy checklist: run migrations before the API",
    "Deploy freeze starts on December 20",
    "Deploy logs are kept for thirty days",
]


class VoyageStub:
    """A tiny stand-in for POST /v1/rerank; `mode` is ok, slow, error or garbage."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "auth": self.headers["Authorization"],
                                      **body})
                if stub.mode == "slow":  # answers once the test lets it (or after 30 s)
                    stub.release.wait(30)
                if stub.mode == "error":
                    return self._send(500, {"detail": "upstream exploded"})
                n = len(body["documents"])
                # Reverse the local order: the last document gets the best score.
                data = [{"index": i, "relevance_score": (i + 1) / n} for i in range(n)]
                if stub.mode == "garbage":
                    data = [{"index": 0, "relevance_score": float("nan")}]
                data.sort(key=lambda d: -d["relevance_score"])
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"total_tokens": 123}})

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[VoyageStub]:
    s = VoyageStub()
    thread = threading.Thread(target=s.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("VOYAGE_API_KEY", "test-key")
    monkeypatch.setenv("HIPPO_VOYAGE_BASE_URL", s.url)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    yield s
    s.server.shutdown()
    s.server.server_close()


@pytest.fixture
def h(db_path: Path) -> Hippo:
    h = hippo.open(db_path, embedder="hash")
    h.add([from_input({"text": t}, h.types, default_project="testproj") for t in TEXTS])
    return h


def ids(res: Any) -> list[int]:
    return [r["id"] for r in res.results]


def test_success_reorders_and_counts_usage(h: Hippo, stub: VoyageStub) -> None:
    local = search(h, "deploy API", rerank=False)
    res = search(h, "deploy API", rerank=True, explain=True)
    assert res.degraded == []
    assert ids(res) == ids(local)[::-1]
    (req,) = stub.requests
    assert req["path"] == "/v1/rerank" and req["auth"] == "Bearer test-key"
    assert req["model"] == "rerank-2.5-lite" and req["query"] == "deploy API"
    assert req["documents"] == [r["text"] for r in local.results]
    n = len(local)
    for rank, r in enumerate(res.results, 1):
        e = r["explain"]
        assert e["rerank"]["rank"] == rank
        assert e["relevance"] == e["rerank"]["score"] == (n + 1 - rank) / n
        assert r["score"] == pytest.approx(0.75 * e["relevance"] + 0.10 * 0.5
                                           + 0.15 * e["freshness"]["value"], abs=1e-12)
        assert e["match"] is None  # the hash embedder has no token vectors
    state = spend.status(h.db, "voyage")
    assert (state["calls"], state["tokens"], state["consecutive_failures"]) == (1, 123, 0)


def test_a_reranked_answer_keeps_the_rerankers_scale(db_path: Path, stub: VoyageStub) -> None:
    """With the local model a query about nothing stored scores 0 in the local order
    (match factor 0); reranked, the reranker's scores are on one scale for every query
    already, so `score` is the final score again (factor 1, set by the rerank)."""
    h = hippo.open(db_path, embedder="local")
    h.add([from_input({"text": t}, h.types, default_project="testproj") for t in TEXTS])
    query = "quantum chromodynamics on a lattice"
    local = search(h, query, rerank=False, explain=True)
    assert [r["score"] for r in local.results] == [0.0] * len(local)
    assert local.results[0]["explain"]["match"]["factor"] == 0.0
    res = search(h, query, rerank=True, explain=True)
    assert res.degraded == [] and len(stub.requests) == 1
    for r in res.results:
        assert r["explain"]["match"]["by"] == "rerank" and r["explain"]["rerank"] is not None
        assert r["explain"]["match"]["factor"] == 1.0
        assert r["score"] == r["explain"]["final"] > 0.0
    h.close()


def test_rerank_setting_and_flag(h: Hippo, stub: VoyageStub, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert search(h, "deploy API").results and stub.requests == []  # off by default
    monkeypatch.setenv("HIPPO_RERANK", "1")
    on = hippo.open(h.settings.database, embedder="hash")
    search(on, "deploy API")
    assert len(stub.requests) == 1
    search(on, "deploy API", rerank=False)
    assert len(stub.requests) == 1
    search(on, "deploy freeze december", limit=1, types=["task"])  # nothing to reorder
    assert len(stub.requests) == 1


def test_timeout_keeps_local_order(h: Hippo, stub: VoyageStub) -> None:
    """The stub holds its answer until the search has returned: only the client's own
    timeout can end the call, and the note says it did (no clock in the test)."""
    local = search(h, "deploy API", rerank=False)
    stub.mode = "slow"
    try:
        res = search(h, "deploy API", rerank=True, explain=True)
    finally:
        stub.release.set()
    assert len(stub.requests) == 1  # the request reached the server: it was cut off there
    assert ids(res) == ids(local)
    (note,) = res.degraded
    assert note.startswith("rerank: voyage rerank failed: ") and note.endswith("(local order)")
    assert "800 ms" in note or "timed out" in note
    assert all(r["explain"]["rerank"] is None and r["degraded"] == [note] for r in res.results)


def test_bad_answer_is_a_failure(h: Hippo, stub: VoyageStub) -> None:
    stub.mode = "garbage"
    res = search(h, "deploy API", rerank=True)
    assert "unexpected rerank result (index 0, score nan)" in res.degraded[0]
    assert spend.status(h.db, "voyage")["consecutive_failures"] == 1


def test_missing_key_degrades_without_a_call(h: Hippo, stub: VoyageStub,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY")
    res = search(h, "deploy API", rerank=True)
    assert res.degraded == ["rerank: VOYAGE_API_KEY is not set (local order)"]
    assert stub.requests == []


def test_three_failures_open_the_breaker_for_another_process(h: Hippo, stub: VoyageStub,
                                                             db_path: Path) -> None:
    local = search(h, "deploy API", rerank=False)
    stub.mode = "error"
    for n in range(3):
        res = search(h, "deploy API", rerank=True)
        assert ids(res) == ids(local)
        assert res.degraded[0].startswith("rerank: voyage rerank failed:"), res.degraded
        assert "HTTP 500: The server failed to process the request" in res.degraded[0]
    assert len(stub.requests) == 3
    state = spend.status(h.db, "voyage")
    assert state["open"] and state["consecutive_failures"] == 3
    proc = subprocess.run(
        [sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder", "hash",
         "search", "deploy API", "--rerank", "--json"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in records] == ids(local)
    (note,) = records[0]["degraded"]
    assert note.startswith("rerank: voyage circuit open for ")
    assert "3 consecutive failures" in note and "HTTP 500" in note
    assert f"hippo: degraded: {note}" in proc.stderr
    assert len(stub.requests) == 3  # the other process made no request


def test_daily_cap_keeps_local_order(db_path: Path, stub: VoyageStub, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[guard.voyage]\ncalls_per_day = 1\n")
    monkeypatch.setenv("HIPPO_CONFIG", str(cfg))
    h = hippo.open(db_path, embedder="hash")
    h.add([from_input({"text": t}, h.types, default_project="testproj") for t in TEXTS])
    local = search(h, "deploy API", rerank=False)
    assert ids(search(h, "deploy API", rerank=True)) == ids(local)[::-1]
    res = search(h, "deploy API", rerank=True)
    assert ids(res) == ids(local)
    assert res.degraded == [("rerank: voyage daily cap of 1 calls reached; raise "
                             "[guard.voyage] calls_per_day or wait until tomorrow (UTC) "
                             "(local order)")]
    assert len(stub.requests) == 1
