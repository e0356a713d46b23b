"""The `health`, `stats` and `reindex` repositories: what `hippo doctor` checks and `hippo stats`
counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from hippo.store import Store, connect

FIXTURES = Path(__file__).parent.parent / "ingest" / "fixtures" / "claude_project"


@pytest.fixture
def store(cli, db_path: Path) -> Iterator[Store]:
    for text, kind in (("we chose sqlite", "decision"), ("run the tests", "rule")):
        assert cli("add", text, "--type", kind).exit_code == 0
    line = orjson.dumps({"text": "prefers tabs", "type": "preference", "author": "machine"})
    assert cli("add", "-", input=line).exit_code == 0
    assert cli("ingest", "--idle-minutes", "0", str(FIXTURES)).exit_code == 0
    db = connect(db_path)
    yield db
    db.close()


def test_stats_counts(store: Store) -> None:
    s = store.stats
    assert s.memory_count() == 3 and s.memory_count(active=True) == 3
    assert s.memories_by("type", active=True) == {"decision": 1, "preference": 1, "rule": 1}
    assert s.memories_by("author", active=False) == {"human": 2, "machine": 1}
    assert s.memories_by("project", active=True) == {"testproj": 3}
    assert s.unverified() == 1  # the machine-written preference, until a person verifies it
    assert s.vector_count("brain") == 3
    assert s.vector_count("echo") == store.chunks.count(every_project=True) == 1
    assert s.session_count() == 1 and s.file_count() == 1 and s.cache_entries() >= 4
    assert s.schema_steps()[0] in ("0001_core", "p0001_core")  # SQLite's, PostgreSQL's
    assert [r["job"] for r in s.latest_runs()] == ["ingest"]
    assert s.chunks_pending(0) == 1 and s.chunks_pending(1) == 0 and s.spend() == []
    assert dict(s.counters(embed=True))["embed.texts_embedded"] >= 4
    assert s.counters(embed=False) == []
    with pytest.raises(ValueError):
        s.memories_by("text", active=True)  # type: ignore[arg-type]


def test_stats_without_vector_tables(db_path: Path) -> None:
    db = connect(db_path)
    assert db.stats.vector_count("brain") == 0 and db.stats.memories_by("status", active=False) == {}
    assert not db.vectors.has("brain") and db.stats.memory_count(active=True) == 0
    db.close()


def test_health_checks_and_repairs(store: Store) -> None:
    h = store.health
    assert h.integrity(5) == ["ok"] and h.pending_migrations() == []
    assert h.foreign_key_violations() == 0
    assert h.check_fulltext("memories_fts").error is None
    with pytest.raises(ValueError):
        h.check_fulltext("memories")
    assert h.size_bytes() > 0
    v = store.reindex
    assert store.vectors.has("brain") and v.declares("brain", 384)
    assert not v.declares("brain", 768)
    assert v.unembedded("brain") == v.orphan_vectors("echo") == []
    (chunk,) = v.chunks_to_embed([1])
    assert chunk["id"] == 1 and set(chunk) == {"id", "text", "project", "session_id",
                                               "started_at"}
    with store.transaction():
        v.drop_chunk_vector(1)
    assert v.unembedded("echo") == [1]
    with store.transaction():
        v.put_chunk_vector(1, bytes(4 * 384), "testproj", chunk["session_id"], 0)
    assert v.unembedded("echo") == []
    path = store.watermarks.offsets()[0][0]
    assert path.endswith(".jsonl")
    with store.transaction():
        store.watermarks.delete(path)
        h.rebuild_fulltext("echo_fts")
    assert store.watermarks.offsets() == []
    assert h.dangling_provenance() == 0 and h.foreign_provenance() == []
    assert store.memories.references() == []


def test_health_token_matrices(store: Store) -> None:
    h = store.health
    assert sorted(h.texts_without_token_matrix("brain", "m#t")) == [
        "prefers tabs", "run the tests", "we chose sqlite"]
    assert len(h.texts_without_token_matrix("echo", "m#t")) == 1
    assert h.token_matrix_count("#t") == 0
    with store.transaction():
        store.embed_cache.put("m#t", [(key, b"\x00") for key in ("a", "b", "c")], "x")
    assert h.token_matrix_count("#t") == 3
    first = h.token_matrices_after("#t", ("", ""), 2)
    assert [r["content_hash"] for r in first] == ["a", "b"]
    rest = h.token_matrices_after("#t", (first[-1]["model"], first[-1]["content_hash"]), 2)
    assert [r["content_hash"] for r in rest] == ["c"]
    with store.transaction():
        h.replace_token_matrix("m#t", "c", b"\x01\x02")
    assert bytes(h.token_matrices_after("#t", ("m#t", "b"), 5)[0]["vector"]) == b"\x01\x02"
