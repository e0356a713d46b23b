"""The search repositories of the store (`store.vectors`, `store.lexical`,
`store.embed_cache`) on their own, through the `Store` protocol."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

import hippo
from hippo.embed.cache import to_blob
from hippo.memory.records import from_input
from hippo.store import connect
from hippo.store.filters import EchoFilters, MemoryFilter
from hippo.store.lexical import IndexUnavailable, Terms
from tests.conftest import BACKEND

# What takes the full-text index away: FTS5's table, or Postgres's generated column.
DROP_FTS = {"sqlite": "DROP TABLE memories_fts",
            "postgres": "ALTER TABLE memories DROP COLUMN tsv"}[BACKEND]


def test_embed_cache_of_vectors_and_token_matrices(db_path: Path) -> None:
    store = connect(db_path)
    with store.transaction():
        store.embed_cache.put("m", {"h1": b"one", "h2": b"two"}, "2026-01-01T00:00:00Z")
        store.embed_cache.put("m", [("h1", b"new")], "2026-01-02T00:00:00Z")  # kept
        store.embed_cache.put("m#t", [("h1", b"mat")], "2026-01-01T00:00:00Z", replace=True)
        store.embed_cache.put("m#t", [("h1", b"mat2")], "2026-01-01T00:00:00Z",
                              replace=True)  # replaced
        store.embed_cache.put("m#t", [("h1", b"mat3")], "2026-01-01T00:00:00Z")  # kept
        # a hash given twice in one call: its first blob, or with `replace` its last
        store.embed_cache.put("d", [("h", b"a"), ("h", b"b")], "2026-01-01T00:00:00Z")
        store.embed_cache.put("r", [("h", b"a"), ("h", b"b")], "2026-01-01T00:00:00Z",
                              replace=True)
        store.embed_cache.put("big", [(f"b{i}", b"v") for i in range(1100)], "x")  # batches
    assert store.embed_cache.get("m", "h1") == b"one"
    assert store.embed_cache.get("m", "nope") is None
    hashes = [f"x{i}" for i in range(1200)] + ["h2", "h1"]  # more than one IN (...) batch
    assert store.embed_cache.get_many("m", hashes) == {"h1": b"one", "h2": b"two"}
    assert store.embed_cache.get("m#t", "h1") == b"mat2"
    assert store.embed_cache.get_many("m#t", ["h1", "h2"]) == {"h1": b"mat2"}
    assert store.embed_cache.get_many("m", ["h1"]) == {"h1": b"one"}  # the key names the format
    assert store.embed_cache.get("d", "h") == b"a" and store.embed_cache.get("r", "h") == b"b"
    assert len(store.embed_cache.get_many("big", [f"b{i}" for i in range(1100)])) == 1100
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
    everywhere = store.vectors.knn(query, 3, MemoryFilter.search())
    assert everywhere[0].id == ids[0] and len(everywhere) == 3
    only_a = store.vectors.knn(query, 3, MemoryFilter.search(projects=("a",)))
    assert {x.id for x in only_a} == {ids[0], ids[2]}
    assert store.vectors.knn(query, 0, MemoryFilter.search()) == []
    assert set(store.vectors.embeddings([ids[0], 999])) == {ids[0]}
    sims = store.vectors.similarities(ids)
    assert set(sims) == {(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])}
    hits = store.lexical.search(Terms(("deploy",)), 5, MemoryFilter.search())
    assert {x.id for x in hits} == {ids[0], ids[1]} and all(x.score > 0 for x in hits)
    assert [x.id for x in store.lexical.search(Terms(("deploy",)), 5, MemoryFilter.search(projects=("b",)))] \
        == [ids[1]]
    # Words are data, never syntax: a quote, an operator or a bare AND is only a word.
    assert store.lexical.search(Terms(('"deploy" AND', "OR")), 5, MemoryFilter.search()) == []
    store.execute(DROP_FTS)  # type: ignore[attr-defined]
    with pytest.raises(IndexUnavailable):  # an index that cannot answer says so
        store.lexical.search(Terms(("deploy",)), 5, MemoryFilter.search())
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
        store.embed_cache.put("m", {"h": b"v"}, "2026-01-01T00:00:00Z")
        store.vectors.bump("x", 1)
    assert store.lexical.extent("brain") == 0 and store.embed_cache.get("m", "h") == b"v"
    gc.disable()  # no collector: only reference counting may close it
    try:
        del store
        assert not os.path.exists(f"{db_path}-wal")
    finally:
        gc.enable()


def _session(store, key: str, texts: list[str]) -> None:  # type: ignore[no-untyped-def]
    from hippo.ingest.chunk import Chunk

    when = "2026-01-01T00:00:00.000Z"
    with store.transaction():
        sid = store.chunks.add_session(key, fmt="generic-jsonl", source_path=f"{key}.jsonl",
                                       project="p", cwd=None, parent_key=None, agent=None,
                                       started_at=when)
        chunks = [Chunk(t, ["user"], i, i, [f"m{i}"], when, when, key)
                  for i, t in enumerate(texts)]
        store.chunks.add(sid, chunks, texts, None, source_path=f"{key}.jsonl", project="p")


@pytest.mark.postgres_only(reason="compares Postgres's Echo BM25 with FTS5's")
def test_echo_bm25_is_fts5s_and_counts_only_the_users_own_chunks(
        db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    rng = random.Random(5)
    words = ["deploy", "deploys", "the", "cluster", "us", "vault", "keys", "rotate", "a"]
    mine = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 25))) for _ in range(80)]
    theirs = [" ".join(["vault"] * 5 + ["deploy"] * rng.randint(0, 9)) for _ in range(80)]
    reference = connect(tmp_path / "fts5.db")
    _session(reference, "s1", mine)
    monkeypatch.setenv("HIPPO_USER", "ann")
    ann = connect(db_path)
    _session(ann, "s1", mine)
    queries = [Terms(("deploy",)), Terms(("vault", "keys"), "or"), Terms(("us", "cluster")),
               Terms(("rotate keys",)), Terms(("deploy", "rotate", "the"), "or")]

    def ranked(store) -> list[list[int]]:  # type: ignore[no-untyped-def]
        return [store.lexical.search_chunks(t, 30, EchoFilters()) for t in queries]

    want = ranked(reference)
    assert ranked(ann) == want and any(want)
    monkeypatch.setenv("HIPPO_USER", "bob")
    bob = connect(db_path)
    _session(bob, "s2", theirs)
    assert ranked(ann) == want  # bob's chunks are neither seen nor counted
    seen = set(bob.lexical.search_chunks(Terms(("vault",)), 500, EchoFilters()))
    assert seen and seen.isdisjoint(set().union(*want))  # and bob sees his own alone
    for store in (reference, ann, bob):
        store.close()
