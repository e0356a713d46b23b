"""Helpers for the extraction tests: write small transcripts, ingest them, read the Brain."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
import pytest

from hippo.store import connect


def write_transcript(path: Path, session: str, turns: Sequence[tuple[str, str]], *,
                     cwd: str = "/home/dev/alpha", day: str = "2026-03-02") -> Path:
    """A generic-JSONL transcript: one `{role, content}` record per turn."""
    lines = []
    for i, (role, text) in enumerate(turns):
        lines.append(orjson.dumps({
            "session_id": session, "cwd": cwd, "id": f"{session}-m{i}", "role": role,
            "content": text, "timestamp": f"{day}T10:{i // 60:02d}:{i % 60:02d}Z"}).decode())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def memories(db_path: Path) -> list[dict]:
    from hippo.memory.records import to_record

    db = connect(db_path)
    try:
        return [to_record(r) for r in db.rows("SELECT * FROM memories ORDER BY id")]
    finally:
        db.close()


def links(db_path: Path) -> list[tuple[int, int]]:
    db = connect(db_path)
    try:
        return [tuple(r) for r in db.execute(
            "SELECT memory_id, chunk_id FROM memory_sources ORDER BY memory_id, chunk_id")]
    finally:
        db.close()


def meta(db_path: Path, key: str) -> str | None:
    db = connect(db_path)
    try:
        return db.meta.get(key)
    finally:
        db.close()


@pytest.fixture
def ingest(cli, tmp_path: Path) -> Callable[..., list[dict]]:
    """Write transcripts named by session and ingest them (idle gate off, hash embedder)."""
    counter = {"n": 0}

    def run(*sessions: tuple[str, Sequence[tuple[str, str]]], cwd: str = "/home/dev/alpha",
            db: Path | None = None) -> list[dict]:
        counter["n"] += 1
        folder = tmp_path / f"t{counter['n']}"
        folder.mkdir()
        for key, turns in sessions:
            write_transcript(folder / f"{key}.jsonl", key, turns, cwd=cwd)
        kwargs = {"db": db} if db is not None else {}
        res = cli("ingest", str(folder), "--idle-minutes", "0", "--format", "generic-jsonl",
                  **kwargs)
        assert res.exit_code == 0, res.stderr
        return res.records

    return run
