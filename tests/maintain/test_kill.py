"""SIGKILL mid-run (a failpoint kills the real `python -m hippo` process at an exact spot):
the database stays consistent and the next run completes the work."""

from __future__ import annotations

import signal

import orjson

from hippo.config import is_server
from hippo.embed.cache import store_model
from hippo.store import connect

NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima")
PAIRS = len(NAMES)


def world(seed) -> None:
    recs = []
    for name in NAMES:
        base = (f"service {name} writes its structured logs to the shared {name} collector "
                f"cluster in the {name} region")
        recs += [{"text": base}, {"text": base + " today"}]
    seed(recs)


def nearest(db, db_path, query: bytes) -> int:
    if is_server(db_path):
        from hippo.store.postgres.vector import Vec

        return db.scalar("SELECT memory_id FROM memories_vec ORDER BY embedding <=> ?, "
                         "memory_id LIMIT 1", (Vec(query),))
    return db.scalar("SELECT memory_id FROM memories_vec WHERE embedding MATCH ? AND k = 1",
                     (query,))


def statuses(cli) -> list[tuple]:
    return [(r["id"], r["status"], r["consolidated_into"], r["text"])
            for r in cli("export").records]


def test_consolidate_killed_between_batches(cli, seed, db_path, hippo_proc, check,
                                            isolated_home, tmp_path) -> None:
    world(seed)
    reference = tmp_path / "reference.db"
    cli("add", "-", input=cli("export").stdout, db=reference)  # same memories, no kill
    cli("consolidate", db=reference)
    expected = [s for s in statuses(lambda *a: cli(*a, db=reference))]
    (isolated_home / "config.toml").write_text("[maintain]\nbatch = 5\n")
    p = hippo_proc(["consolidate"], env={"HIPPO_FAILPOINT": "consolidate.batch:2"})
    assert p.returncode == -signal.SIGKILL
    merged = [orjson.loads(x) for x in p.stdout.splitlines()]
    assert len([e for e in merged if e["event"] == "merge"]) == 10  # two batches committed
    state = check(db_path)
    assert state["active"] == 2 * PAIRS - 10
    db = connect(db_path)
    assert db.scalar("SELECT outcome FROM runs") == "running"
    p = hippo_proc(["consolidate"])
    assert p.returncode == 0, p.stderr
    summary = orjson.loads(p.stdout.splitlines()[-1])
    assert summary["mode"] == "full" and summary["merged"] == 2  # the unfinished full run
    assert statuses(cli) == expected
    assert [r["outcome"] for r in db.rows("SELECT outcome FROM runs ORDER BY started_at")] == [
        "killed", "ok"]
    check(db_path)


def test_consolidate_killed_inside_a_transaction(cli, seed, db_path, hippo_proc, check,
                                                 isolated_home) -> None:
    world(seed)
    before = cli("export").stdout
    (isolated_home / "config.toml").write_text("[maintain]\nbatch = 5\n")
    p = hippo_proc(["consolidate"], env={"HIPPO_FAILPOINT": "consolidate.txn:1"})
    assert p.returncode == -signal.SIGKILL
    assert not [x for x in p.stdout.splitlines() if '"merge"' in x]
    assert cli("export").stdout == before  # the open transaction rolled back
    check(db_path)
    p = hippo_proc(["consolidate"])
    assert orjson.loads(p.stdout.splitlines()[-1])["merged"] == PAIRS
    check(db_path)


def test_reindex_killed_mid_way_and_in_the_swap(cli, seed, db_path, hippo_proc, check) -> None:
    seed([{"text": f"memory {i} about the topic {i % 9}"} for i in range(50)])
    before = cli("export").stdout
    p = hippo_proc(["reindex", "--embedder", "local", "--batch", "10"],
                   env={"HIPPO_FAILPOINT": "reindex.batch:2"})
    assert p.returncode == -signal.SIGKILL
    db = connect(db_path)
    assert store_model(db, "brain") == ("hash-bow-v1", 384)  # old vectors still in use
    assert db.scalar("SELECT count(*) FROM memories_vec_next") == 20
    if is_server(db_path):  # the side table has its own HNSW index, filled as it goes
        assert db.scalar("SELECT to_regclass('memories_vec_hnsw_next') IS NOT NULL")
    check(db_path)
    from hippo import embed

    query = embed.get("hash").embed_batch(["memory 7 about the topic 7"])[0].tobytes()
    assert nearest(db, db_path, query) == 8  # vector search keeps working on the old vectors
    p = hippo_proc(["reindex", "--embedder", "local", "--batch", "10"],
                   env={"HIPPO_FAILPOINT": "reindex.swap:1"})
    assert p.returncode == -signal.SIGKILL
    assert store_model(db, "brain") == ("hash-bow-v1", 384)  # the swap rolled back
    assert db.scalar("SELECT count(*) FROM memories_vec_next") == 50
    check(db_path)
    p = hippo_proc(["reindex", "--embedder", "local", "--batch", "10"])
    assert p.returncode == 0, p.stderr
    resume, summary = (orjson.loads(x) for x in p.stdout.splitlines())
    assert resume["kept"] == 50 and summary["built"] == 0 and summary["result"] == "swapped"
    assert store_model(db, "brain") == ("all-MiniLM-L6-v2-int8", 384)
    assert cli("export").stdout == before
    check(db_path)
