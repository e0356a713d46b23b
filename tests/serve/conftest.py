from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.serve.helpers import kill_all


@pytest.fixture(autouse=True)
def no_server_left(isolated_home: Path) -> Iterator[None]:
    """Every server a test started is gone when it ends (killed here if the test left one:
    the test then fails)."""
    yield
    left = kill_all()
    assert not left, f"the test left servers running: {left}"


class Embeddings:
    """An OpenAI-compatible /v1/embeddings server on 127.0.0.1 that holds a query's reply
    until the test lets it go."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.requests = 0
        self.release_at = 0  # let every reply go once this many requests came (0: never)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                outer.requests += 1
                if outer.release_at and outer.requests >= outer.release_at:
                    outer.release.set()
                outer.arrived.set()
                outer.release.wait(30)
                data = [{"object": "embedding", "index": i, "embedding": _vector(t)}
                        for i, t in enumerate(texts)]
                payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                                      "usage": {"prompt_tokens": 3, "total_tokens": 3}})
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    values = [b - 127.5 for b in digest[:8]]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


@pytest.fixture
def embeddings(monkeypatch: pytest.MonkeyPatch) -> Iterator[Embeddings]:
    server = Embeddings()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    monkeypatch.setenv("HIPPO_OPENAI_EMBED_DIMENSIONS", "8")
    try:
        yield server
    finally:
        server.close()
