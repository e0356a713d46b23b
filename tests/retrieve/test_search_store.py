"""The search repositories of the store (`store.vectors`, `store.lexical`, `store.tokens`,
`store.embed_cache`) on their own, through the `Store` protocol."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

import hippo
from hippo.records import from_input
from hippo.store import connect
from hippo.store.filters import EchoFilters, SearchFilters
from hippo.store.lexical import IndexUnavailable, Terms
from hippo.vectors import to_blob
from tests.conftest import BACKEND

# What takes the full-text index away: FTS5's table, or Postgres's generated column.
DROP_FTS = {"sqlite": "DROP TABLE memories_fts",
            "postgres": "ALTER TABLE memories DROP COLUMN tsv"}[BACKEND]


def test_embed_cache_and_tokens(db_path: Path) -> None:
    store = connect(db_path)
    with store.transaction():
        store.embed_cache.put_many("m", {"h1": b"one", "h2": b"two"}, "2026-01-01T00:00:00Z")
        store.embed_cache.put_many("m", [("h1", b"new")], "2026-01-02T00:00:00Z")  # kept
        store.tokens.put("m#t", [("h1", b"mat")], "2026-01-01T00:00:00Z")
        store.tokens.put("m#t", [("h1", b"mat2")], "2026-01-01T00:00:00Z")  # replaced
        store.tokens.put("m#t", [("h1", b"mat3")], "2026-01-01T00:00:00Z", replace=False)
    assert store.embed_cache.get("m", "h1") == b"one"
    assert store.embed_cache.get("m", "nope") is None
    hashes = [f"x{i}" for i in range(1200)] + ["h2", "h1"]  # more than one IN (...) batch
    assert store.embed_cache.get_many("m", hashes) == {"h1": b"one", "h2": b"two"}
    assert store.tokens.get("m#t", "h1") == b"mat2"
    assert store.tokens.get_many("m#t", ["h1", "h2"]) == {"h1": b"mat2"}
    assert store.tokens.get_many("m", ["h1"]) == {"h1": b"one"}  # the key names the format
    store.close()


def test_vectors_and_lexical_of_the_brain(db_path: Path) -> None:
    h = hippo.open(db_path, embedder="hash")
    store = h.db
    assert not store.vectors.has("brain") and store.vectors.model("brain") is None
    assert store.lexical.extent("brain") == 0
    ids = [int(c.record["id"]) for c in h.add([
        from_input({"text": t, "project": p}, h.types, default_project=None)
        for t, p in [("deploy the staging cluster", "a"), ("deploy keys live in the vault", "b"),
                     ("lunch is at noon", "a")]])]
    assert store.vectors.has("brain") and store.vectors.model("brain") == ("hash-bow-v1", 384)
    assert store.lexical.extent("brain") == max(ids)
    query = to_blob(h.embed(["deploy staging"])[0])
    everywhere = store.vectors.knn(query, 3, SearchFilters())
    assert everywhere[0].id == ids[0] and len(everywhere) == 3
    only_a = store.vectors.knn(query, 3, SearchFilters(projects=("a",)))
    assert {x.id for x in only_a} == {ids[0], ids[2]}
    assert store.vectors.knn(query, 0, SearchFilters()) == []
    assert set(store.vectors.embeddings([ids[0], 999])) == {ids[0]}
    sims = store.vectors.similarities(ids)
    assert set(sims) == {(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])}
    hits = store.lexical.search(Terms(("deploy",)), 5, SearchFilters())
    assert {x.id for x in hits} == {ids[0], ids[1]} and all(x.score > 0 for x in hits)
    assert [x.id for x in store.lexical.search(Terms(("deploy",)), 5, SearchFilters(projects=("b",)))] \
        == [ids[1]]
    # Words are data, never syntax: a quote, an operator or a bare AND is only a word.
    assert store.lexical.search(Terms(('"deploy" AND', "OR")), 5, SearchFilters()) == []
    store.execute(DROP_FTS)  # type: ignore[attr-defined]
    with pytest.raises(IndexUnavailable):  # an index that cannot answer says so
        store.lexical.search(Terms(("deploy",)), 5, SearchFilters())
    counters = "SELECT name, value FROM counters"
    before = {r["name"]: r["value"] for r in store.rows(counters)}  # type: ignore[attr-defined]
    with store.transaction():
        store.vectors.bump("test.count", 2)
        store.vectors.bump("test.count", 0)
        store.vectors.bump("test.count")
    after = {r["name"]: r["value"] for r in store.rows(counters)}  # type: ignore[attr-defined]
    assert after["test.count"] == before.get("test.count", 0) + 3
    h.close()


def test_echo_filters_and_an_empty_echo(db_path: Path) -> None:
    store = connect(db_path)
    assert not store.vectors.has("echo") and store.lexical.extent("echo") == 0
    assert not EchoFilters().narrowed() and EchoFilters(projects=[None]).narrowed()
    assert store.lexical.search_chunks(Terms(("x",)), 5, EchoFilters(roles=["user"])) == []
    store.close()


def test_a_dropped_store_closes_its_file(db_path: Path) -> None:
    """A repository does not keep its store alive: once the last reference goes, the
    connection is closed (its write-ahead log checkpointed and removed)."""
    store = connect(db_path)
    with store.transaction():
        store.embed_cache.put_many("m", {"h": b"v"}, "2026-01-01T00:00:00Z")
        store.vectors.bump("x", 1)
    assert store.lexical.extent("brain") == 0 and store.tokens.get("m", "h") == b"v"
    gc.disable()  # no collector: only reference counting may close it
    try:
        del store
        assert not os.path.exists(f"{db_path}-wal")
    finally:
        gc.enable()
