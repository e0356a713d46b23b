"""Helpers for the maintenance tests: seed memories, check the database is consistent."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import apsw
import orjson
import pytest

from hippo.config import is_server
from hippo.store import connect
from tests.conftest import BACKEND

if BACKEND == "postgres":  # the server named by HIPPO_TEST_PGDATA / HIPPO_TEST_PG_URL, read
    from tests.pgtest import base_url  # now: `isolated_home` drops HIPPO_* from each test

    base_url()


def jsonl(records: Iterable[dict]) -> str:
    return "\n".join(orjson.dumps(r).decode() for r in records) + "\n"


@pytest.fixture
def seed(cli) -> Callable[..., list[dict]]:
    """Add records (machine-authored unless said otherwise) through `hippo add -`."""

    def run(records: Iterable[dict], embedder: str = "hash") -> list[dict]:
        rows = [{"author": "machine", **r} for r in records]
        res = cli("add", "-", input=jsonl(rows), embedder=embedder)
        assert res.exit_code == 0, res.stderr
        return res.records

    return run


def consistency(db_path: Path | str) -> dict:
    """FTS integrity, vector rows == active memories, links that point at real rows."""
    db = connect(db_path)
    try:
        if is_server(db_path):  # a generated tsvector cannot drift; the server checks keys
            fts = "ok" if db.health.check_fulltext("memories_fts").error is None else "corrupt"
            fk: list = []
        else:
            try:
                db.conn.execute("INSERT INTO memories_fts(memories_fts, rank) "
                                "VALUES ('integrity-check', 1)")
                fts = "ok"
            except apsw.CorruptError:
                fts = "corrupt"
            fk = db.rows("PRAGMA foreign_key_check")
        active = {r[0] for r in db.execute("SELECT id FROM memories WHERE status = 'active'")}
        vec = ({r[0] for r in db.execute("SELECT memory_id FROM memories_vec")}
               if db.vectors.has("brain") else set())
        dangling = db.scalar(
            "SELECT count(*) FROM memories m WHERE m.consolidated_into IS NOT NULL AND "
            "(m.status != 'consolidated' OR NOT EXISTS (SELECT 1 FROM memories s WHERE "
            "s.id = m.consolidated_into))")
        return {"fts": fts, "vec_equals_active": vec == active, "active": len(active),
                "dangling": dangling, "fk": fk}
    finally:
        db.close()


@pytest.fixture
def check() -> Callable[[Path | str], dict]:
    def run(db_path: Path | str) -> dict:
        state = consistency(db_path)
        assert state["fts"] == "ok", state
        assert state["vec_equals_active"], state
        assert state["dangling"] == 0 and state["fk"] == [], state
        return state

    return run
