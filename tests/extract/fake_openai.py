"""A tiny OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 for the llm tests.

Each request takes the next scripted reply (`Reply`), or `default(request)` when the script
is empty. Replies can be an answer (the assistant message's content), an HTTP error status,
or a delay longer than the client's timeout.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

CHUNK = re.compile(r"\[chunk (\d+)\]")


@dataclass
class Reply:
    content: str | None = None  # the assistant's answer
    status: int = 200
    delay: float = 0.0
    tokens: int = 120


def memories(*items: dict[str, Any]) -> str:
    return json.dumps({"memories": list(items)})


def decision_from(request: dict[str, Any]) -> Reply:
    """Default: one decision citing the first chunk shown, worded from the prompt's project."""
    prompt = request["messages"][1]["content"]
    first = int(CHUNK.search(prompt).group(1))  # type: ignore[union-attr]
    found = re.search(r"^Project: (.+)$", prompt, re.MULTILINE)
    project = found.group(1) if found else "unknown"
    return Reply(memories({"type": "decision", "importance": 0.8, "tags": ["Storage", "db"],
                           "evidence": [first],
                           "text": f"The {project} project stores events in PostgreSQL "
                                   f"(decided on 2026-03-02)."}))


class FakeOpenAI:
    def __init__(self, default: Callable[[dict[str, Any]], Reply] = decision_from) -> None:
        self.script: list[Reply] = []
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append({"path": self.path, "auth": self.headers.get(
                        "Authorization"), **body})
                    reply = outer.script.pop(0) if outer.script else outer.default(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    payload = {"error": {"message": f"fake error {reply.status}",
                                         "type": "server_error", "code": None}}
                else:
                    payload = {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                        "model": body.get("model"),
                        "choices": [{"index": 0, "finish_reason": "stop", "message": {
                            "role": "assistant", "content": reply.content}}],
                        "usage": {"prompt_tokens": reply.tokens - 20, "completion_tokens": 20,
                                  "total_tokens": reply.tokens},
                    }
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
