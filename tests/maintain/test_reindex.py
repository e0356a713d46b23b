"""`hippo reindex`: a side table built in batches, resumable, swapped in one transaction."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import embed
from hippo.config import is_server
from hippo.core import Hippo
from hippo.embed.cache import content_hash, ensure_store, from_blob, store_model, to_blob
from hippo.embed.hashed import HashEmbedder
from hippo.maintain import reindex
from hippo.store import connect


class Alt(HashEmbedder):
    """Another 'model' with another dimension, so a mix-up cannot go unnoticed."""

    name = "alt"
    model_id = "alt-bow-64"
    dimensions = 64


@pytest.fixture(autouse=True)
def alt_registered() -> None:
    embed.names()  # built-ins first: registering before them would hide them
    embed.register("alt", lambda settings: Alt())


# PostgreSQL: the live Brain vector table's columns and indexes (after a swap as before).
PG_SHAPE = ("SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type "
            "FROM pg_attribute a WHERE a.attrelid = to_regclass('memories_vec') AND a.attnum > 0 "
            "AND NOT a.attisdropped UNION ALL SELECT indexrelid::regclass::text, 'index' "
            "FROM pg_index WHERE indrelid = to_regclass('memories_vec') ORDER BY 1")
LIVE_SHAPE = [{"name": "embedding", "type": "vector(64)"},
              {"name": "memories_vec_hnsw", "type": "index"},
              {"name": "memories_vec_pkey", "type": "index"},
              {"name": "memory_id", "type": "bigint"}]


def vectors(db_path) -> dict[int, np.ndarray]:
    db = connect(db_path)
    return {k: from_blob(b) for k, b in db.execute("SELECT memory_id, embedding FROM memories_vec")}


def test_reindex_swaps_model_and_vectors(cli, seed, db_path, check) -> None:
    seed([{"text": f"memory {i} about topic {i % 7}"} for i in range(40)])
    cli("forget", "3")
    cli("consolidate")
    before = cli("export").stdout
    r = cli("reindex", "--embedder", "alt", "--batch", "7")
    assert r.exit_code == 0, r.stderr
    (summary,) = r.records
    assert summary["from"] == "hash-bow-v1" and summary["to"] == "alt-bow-64"
    assert summary["rows"] == 39 and summary["built"] == 39 and summary["result"] == "swapped"
    db = connect(db_path)
    assert store_model(db, "brain") == ("alt-bow-64", 64)
    assert db.scalar("SELECT value FROM meta WHERE key = 'brain.embedder'") == "alt"
    assert not db.reindex.has_side_table("brain")
    if is_server(db_path):  # the side table took the live one's place, names and all
        assert db.rows(PG_SHAPE) == LIVE_SHAPE
    vecs = vectors(db_path)
    texts = {x["id"]: x["text"] for x in cli("export").records}
    assert all(np.allclose(v, Alt().embed_batch([texts[k]])[0]) for k, v in vecs.items())
    assert cli("export").stdout == before
    check(db_path)
    # The recorded model is used from now on; consolidate re-checks everything once.
    assert cli("add", "memory 99 about topic 1", embedder=None).exit_code == 0
    assert cli("consolidate", embedder=None).records[-1]["why"] == "first run"
    assert cli("add", "x", embedder="hash").exit_code == 78
    check(db_path)


def test_reindex_resumes_and_catches_up_with_changes(cli, seed, db_path, check) -> None:
    seed([{"text": f"memory {i} about topic {i % 7}"} for i in range(20)])
    h = Hippo.open(db_path)
    t = reindex.Tables("brain")
    reindex._prepare(h.db, t, {"model": "alt-bow-64", "dim": 64, "embedder": "alt"}, None,
                     lambda ev: None)
    reindex._build(h.db, t, Alt(), list(range(1, 11)), h.settings)  # killed after 10 rows
    h.close()
    assert store_model(connect(db_path), "brain")[0] == "hash-bow-v1"  # still the old one
    cli("edit", "2", "--text", "memory two was rewritten")  # stale in the side table
    cli("forget", "3")                                       # gone from the live table
    cli("add", "a brand new memory")                         # not in the side table
    r = cli("reindex", "--embedder", "alt", "--batch", "4")
    assert r.exit_code == 0, r.stderr
    resume, summary = r.records
    assert resume == {"event": "resume", "store": "brain", "kept": 10}
    assert summary["rows"] == 20 and summary["resumed"] == 8 and summary["built"] == 12
    vecs = vectors(db_path)
    assert sorted(vecs) == [i for i in range(1, 22) if i != 3]
    assert np.allclose(vecs[2], Alt().embed_batch(["memory two was rewritten"])[0])
    check(db_path)


def test_reindex_other_target_restarts_and_dry_run(cli, seed, db_path) -> None:
    seed([{"text": f"memory {i}"} for i in range(5)])
    h = Hippo.open(db_path)
    t = reindex.Tables("brain")
    reindex._prepare(h.db, t, {"model": "other", "dim": 8, "embedder": "x"}, None,
                     lambda ev: None)
    h.close()
    dry = cli("reindex", "--embedder", "alt", "--dry-run")
    assert dry.records[-1]["built"] == 5 and dry.records[-1]["result"].startswith("dry run")
    assert store_model(connect(db_path), "brain")[0] == "hash-bow-v1"
    r = cli("reindex", "--embedder", "alt")
    assert r.records[0] == {"event": "restart", "store": "brain", "was": "other",
                            "now": "alt-bow-64"}
    assert r.records[-1]["result"] == "swapped"
    again = cli("reindex", "--embedder", "alt")
    assert again.records[-1]["result"] == "already uses alt-bow-64; --force re-embeds anyway"
    assert cli("reindex", embedder=None).exit_code == 2
    assert cli("reindex", "--embedder", "alt", "--store", "nope").exit_code == 2


def test_reindex_echo_keeps_metadata(db_path, cli) -> None:
    server = is_server(db_path)
    db = connect(db_path)
    ensure_store(db, "echo", embed.get("hash"))
    db.execute("INSERT INTO echo_sessions(id, session_key, format, source_path) "
               "VALUES (1, 's1', 'claude', '/t.jsonl')")
    for i in range(1, 6):
        text = f"chunk {i} of the transcript"
        db.execute("INSERT INTO echo_chunks(id, session_id, seq, source_path, "
                   "project, roles, text, content_hash, created_at) VALUES (?, 1, ?, "
                   "'/t.jsonl', 'p', 'user', ?, ?, 'now')", (i, i, text, content_hash(text)))
        blob = to_blob(embed.get("hash").embed_batch([text])[0])
        if server:  # no metadata columns: the chunk's row is its metadata
            from hippo.store.postgres.vector import Vec

            db.execute("INSERT INTO echo_vec(chunk_id, embedding) VALUES (?, ?)",
                       (i, Vec(blob)))
        else:
            db.execute("INSERT INTO echo_vec(chunk_id, embedding, project, session_id, started) "
                       "VALUES (?, ?, 'p', 1, ?)", (i, blob, 1000 + i))
    db.close()
    r = cli("reindex", "--embedder", "alt", "--store", "echo")
    assert r.records[-1]["result"] == "swapped", r.stderr
    db = connect(db_path)
    assert store_model(db, "echo") == ("alt-bow-64", 64)
    if server:
        assert db.rows("SELECT v.chunk_id, c.project, c.session_id FROM echo_vec v JOIN "
                       "echo_chunks c ON c.id = v.chunk_id ORDER BY v.chunk_id")[0] == {
            "chunk_id": 1, "project": "p", "session_id": 1}
    else:
        assert db.rows("SELECT chunk_id, project, session_id, started FROM echo_vec "
                       "ORDER BY chunk_id")[0] == {"chunk_id": 1, "project": "p",
                                                   "session_id": 1, "started": 1001}
    assert db.reindex.vector_count("echo") == 5
    assert store_model(db, "brain") is None


def test_an_open_connection_reads_the_new_vectors_after_a_reindex(cli, seed, db_path) -> None:
    """A long-lived process (the MCP server) keeps working across another process's reindex
    to another dimension (PostgreSQL: its prepared statements of the old table are stale)."""
    seed([{"text": f"memory {i} about topic {i % 3}"} for i in range(6)])
    db = connect(db_path)
    for _ in range(8):  # often enough that the driver prepares the statement
        assert len(db.vectors.embeddings([1])[1]) == 4 * 384
    r = cli("reindex", "--embedder", "alt")
    assert r.exit_code == 0, r.stderr
    assert len(db.vectors.embeddings([1])[1]) == 4 * 64
    with db.transaction():
        assert len(db.vectors.embeddings([2])[2]) == 4 * 64
    db.close()
