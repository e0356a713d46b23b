"""Helpers for the MCP tests: a seeded database (an ingested, extracted session), a server
on it, and tool calls through the SDK's own in-memory client."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from tests.extract.conftest import write_transcript

DECISION = "We decided to use PostgreSQL for the event store."
TURNS = [("user", "can you look at the storage layer?"),
         ("assistant", "Sure. The event store needs a database."),
         ("user", f"ok so {DECISION[0].lower()}{DECISION[1:]}")]


@pytest.fixture
def seeded(cli, tmp_path: Path, db_path: Path) -> Path:
    """`db_path` holding one ingested session (project alpha) and the decision extracted
    from it, with its provenance: memory 1, chunk 1."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    write_transcript(folder / "alpha-1.jsonl", "alpha-1", TURNS)
    r = cli("ingest", str(folder), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert r.exit_code == 0, r.stderr
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    return db_path


@pytest.fixture(scope="session", autouse=True)
def _server_from_the_environment() -> None:
    """Start the postgres pass's server before `isolated_home` drops every HIPPO_* variable,
    so HIPPO_TEST_PG_URL / HIPPO_TEST_PGDATA choose it (tests/pgtest.py caches it)."""
    from tests.conftest import BACKEND

    if BACKEND == "postgres":
        from tests.pgtest import base_url

        base_url()


def hold_write_lock(db_path: Path | str, started: threading.Event,
                    release: threading.Event | float) -> None:
    """Hold the store's write lock (SQLite's BEGIN IMMEDIATE, the server's writer lock)
    from `started` until `release` is set (or for that many seconds)."""
    from hippo.store import connect

    db = connect(db_path)
    try:
        with db.transaction():
            started.set()
            if isinstance(release, threading.Event):
                release.wait(10)
            else:
                time.sleep(release)
    finally:
        db.close()


def text_of(result: Any) -> str:
    return str(result.content[0].text)


def data(result: Any) -> Any:
    """The JSON a successful tool call answered."""
    assert not result.is_error, text_of(result)
    return orjson.loads(text_of(result))


@pytest.fixture
def make_server(db_path: Path) -> Callable[..., Any]:
    """An MCP server on `db_path` (hash embedder, project alpha): `[mcp]` params as keywords."""
    from hippo.core import Hippo
    from hippo.mcp.params import McpParams
    from hippo.mcp.server import build
    from hippo.mcp.tools import Tools

    made: list[Tools] = []

    def make(project: str = "alpha", **params: Any) -> Any:
        h = Hippo(None, db=str(db_path), embedder="hash", project=project)
        engine = Tools(h, McpParams(**params))
        made.append(engine)
        server = build(engine)
        server.engine = engine  # type: ignore[attr-defined]
        return server

    yield make
    for engine in made:
        engine.close()


def calls(server: Any, *steps: tuple[str, dict[str, Any]]) -> list[Any]:
    """Run tool calls in order through one in-memory client session."""
    from mcp import Client

    async def run() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in steps]

    return anyio.run(run)
