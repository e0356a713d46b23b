"""The warm index stays current: writes by another connection or process are seen by the
next search, an erased vector leaves memory, a replaced file, a reindex or a migration
reloads, and what the index cannot hold or read goes to the store itself."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

from hippo import embed
from hippo.embed.hashed import HashEmbedder
from hippo.store import connect
from hippo.store.filters import MemoryFilter
from hippo.warm.index import Arrays, WarmIndex
from tests.warm.stores import DIM, add, build, unit

pytestmark = pytest.mark.sqlite_only(reason="the warm index holds a SQLite file's vectors")
ANY = MemoryFilter.search(include_superseded=True)


def hits(found: list) -> list[tuple[int, float]]:
    return sorted(((h.id, h.distance) for h in found), key=lambda x: (x[1], x[0]))


def held(index: WarmIndex) -> set[int]:
    """The ids in the index's arrays (and none anywhere else in them)."""
    assert index._held is not None
    ids: set[int] = set()
    for a in index._held.blocks.values():
        block = set(a.ids[:a.n].tolist())
        assert block == set(a.where) and not a.vecs[a.n:].any() and not a.ids[a.n:].any()
        assert not ids & block
        ids |= block
    assert ids == set(index._held.home)
    return ids


def holds(index: WarmIndex, blob: bytes) -> bool:
    """Whether any array of the index holds these bytes."""
    assert index._held is not None
    return any(blob in a.vecs.tobytes() for a in index._held.blocks.values())


def warm_db(path: Path, max_bytes: int = 1 << 30) -> tuple:
    """A store opened as a warm process opens it: (db, the store's own vectors, index)."""
    index = WarmIndex(path, max_bytes)
    db = connect(path, index=index)
    original = db.vectors._original
    return db, original, index


def test_writes_through_another_connection_are_seen_at_once(db_path: Path) -> None:
    build(db_path, 1500, seed=1)
    db, original, index = warm_db(db_path)
    rng = np.random.default_rng(9)
    q = unit(rng)[0]
    first = db.vectors.knn(q.tobytes(), 5, ANY)
    other = connect(db_path)  # another process's writes, through its own connection
    with other.transaction():
        add(other, 5000, random.Random(1), q, project=None)  # the query itself: nearest
        other.vectors.drop(first[0].id)
        other.vectors.put(first[1].id, -q, project="", type="fact", tier="semantic",
                                  created=0)  # moved to the far side
    found = db.vectors.knn(q.tobytes(), 5, ANY)
    assert found[0].id == 5000 and found[0].distance == pytest.approx(0, abs=1e-6)
    assert first[0].id not in {h.id for h in found} and first[1].id not in {h.id for h in found}
    assert hits(found) == hits(original.knn(q.tobytes(), 5, ANY))
    ids = held(index)
    assert 5000 in ids and first[0].id not in ids
    report = index.report()
    assert report["full_loads"] == 1 and report["incremental_syncs"] == 1
    assert report["changes_applied"] == 3 and report["vectors"] == len(ids)


def test_forget_hard_in_another_process_leaves_memory(cli, hippo_proc, db_path: Path) -> None:
    for text in ("the deploy script lives in ops/deploy.sh", "staging uses the blue cluster",
                 "rotate the api keys monthly"):
        assert cli("add", text).exit_code == 0
    import hippo

    h = hippo.open(db_path, embedder="hash")
    db, original, index = warm_db(db_path)
    q = h.embed(["the deploy script lives in ops/deploy.sh"])[0].astype("<f4").tobytes()
    (top,) = db.vectors.knn(q, 1, ANY)
    blob = db.vectors.embeddings([top.id])[top.id]
    assert top.distance == pytest.approx(0, abs=1e-6) and top.id in held(index)
    r = hippo_proc(["--embedder", "hash", "forget", "--hard", str(top.id)])
    assert r.returncode == 0, r.stderr
    found = db.vectors.knn(q, 3, ANY)
    assert top.id not in {x.id for x in found} and hits(found) == hits(original.knn(q, 3, ANY))
    assert top.id not in held(index)
    assert not holds(index, blob)  # not a copy left anywhere
    r = hippo_proc(["--embedder", "hash", "add", "the deploy script moved to ci/deploy.sh"])
    assert r.returncode == 0, r.stderr
    assert len(db.vectors.knn(q, 5, ANY)) == 3 == len(held(index))


def test_a_replaced_file_is_loaded_again(db_path: Path, tmp_path: Path) -> None:
    build(db_path, 800, seed=1)
    db, _, index = warm_db(db_path)
    q = unit(np.random.default_rng(2))[0].tobytes()
    db.vectors.knn(q, 5, ANY)
    other = tmp_path / "other.db"
    build(other, 300, seed=2)
    db.close()
    os.replace(other, db_path)
    for suffix in ("-wal", "-shm"):
        if Path(f"{other}{suffix}").exists():
            os.replace(f"{other}{suffix}", f"{db_path}{suffix}")
    db = connect(db_path, index=index)
    original = db.vectors._original
    assert hits(db.vectors.knn(q, 20, ANY)) == hits(original.knn(q, 20, ANY))
    assert index.report()["full_loads"] == 2 and index.report()["vectors"] == len(held(index))
    assert len(held(index)) == db.scalar("SELECT count(*) FROM memories_vec")


class Alt(HashEmbedder):
    """Another model, of another dimension."""

    name = "alt"
    model_id = "alt-bow-64"
    dimensions = 64


def test_a_reindex_to_another_model_and_back(cli, db_path: Path) -> None:
    embed.names()  # built-ins first: registering before them would hide them
    embed.register("alt", lambda settings: Alt())
    for i in range(30):
        assert cli("add", f"memory {i} about topic {i % 7}").exit_code == 0
    db, original, index = warm_db(db_path)
    # k past the store's size: the hashing model's equal distances leave no tie at the edge
    q = HashEmbedder().embed_batch(["topic 3"])[0].astype("<f4").tobytes()
    assert hits(db.vectors.knn(q, 40, ANY)) == hits(original.knn(q, 40, ANY))
    assert cli("reindex", "--embedder", "alt").exit_code == 0
    q64 = Alt().embed_batch(["topic 3"])[0].astype("<f4").tobytes()
    db2 = connect(db_path, index=index)
    original2 = db2.vectors._original
    assert hits(db2.vectors.knn(q64, 40, ANY)) == hits(original2.knn(q64, 40, ANY))
    assert index.report()["dim"] == 64 and index.report()["full_loads"] == 2
    assert cli("reindex", "--embedder", "hash").exit_code == 0
    assert cli("reindex", "--embedder", "hash", "--force").exit_code == 0  # same model
    db3 = connect(db_path, index=index)
    original3 = db3.vectors._original
    assert hits(db3.vectors.knn(q, 40, ANY)) == hits(original3.knn(q, 40, ANY))
    assert index.report()["dim"] == 384 and index.report()["full_loads"] == 3


def test_a_store_over_max_bytes_is_not_held(db_path: Path) -> None:
    build(db_path, 500, seed=4)
    db, original, index = warm_db(db_path, max_bytes=100_000)
    q = unit(np.random.default_rng(4))[0].tobytes()
    assert hits(db.vectors.knn(q, 10, ANY)) == hits(original.knn(q, 10, ANY))
    report = index.report()
    assert not report["held"] and report["vectors"] == report["bytes"] == 0
    assert "max_bytes" in report["why_not"] and report["delegated"] == 1
    # grown past the bound by writes: let go
    db, original, index = warm_db(db_path, max_bytes=Arrays.bytes_for(DIM, 520))
    assert db.vectors.knn(q, 3, ANY) and index.report()["held"]
    other = connect(db_path)
    vecs = unit(np.random.default_rng(5), 400)
    rng = random.Random(5)
    with other.transaction():
        for i, v in enumerate(vecs):
            add(other, 10_000 + i, rng, v)
    assert hits(db.vectors.knn(q, 10, ANY)) == hits(original.knn(q, 10, ANY))
    assert not index.report()["held"] and index._held is None


def test_an_unmigrated_file_is_searched_by_the_store(db_path: Path) -> None:
    build(db_path, 300, seed=6)
    old = connect(db_path)
    with old.transaction():
        old.execute("DROP TABLE vector_log")
        old.execute("DELETE FROM _migrations WHERE name = '0008_vector_log'")
    old.close()
    index = WarmIndex(db_path, 1 << 30)
    # as doctor opens it: no step applied
    db = connect(db_path, mode="read", migrate=False, index=index)
    original = db.vectors._original
    q = unit(np.random.default_rng(6))[0].tobytes()
    assert hits(db.vectors.knn(q, 10, ANY)) == hits(original.knn(q, 10, ANY))
    report = index.report()
    assert not report["held"] and "vector log" in report["why_not"]
    assert not db.has_table("vector_log")  # a read never migrates
    migrated = connect(db_path, index=index)  # a write command's open applies the step
    assert hits(migrated.vectors.knn(q, 10, ANY)) == hits(original.knn(q, 10, ANY))
    assert index.report()["held"] and index.report()["served"] == 1


def test_inside_a_transaction_the_store_answers(db_path: Path) -> None:
    """Its own uncommitted writes are the store's to see; the shared index takes none."""
    build(db_path, 300, seed=8)
    db, _, index = warm_db(db_path)
    q = unit(np.random.default_rng(8))[0]
    db.vectors.knn(q.tobytes(), 3, ANY)
    with pytest.raises(RuntimeError), db.transaction():
        add(db, 7000, random.Random(1), q, project=None)
        # (q is memory 1's vector too: the two tie at distance 0, ordered by id)
        assert [h.id for h in db.vectors.knn(q.tobytes(), 2, ANY)] == [1, 7000]
        raise RuntimeError("rolled back")
    assert 7000 not in held(index)
    assert 7000 not in [h.id for h in db.vectors.knn(q.tobytes(), 2, ANY)]
    assert 7000 not in held(index)


def test_every_vector_write_is_logged(db_path: Path) -> None:
    build(db_path, 50, seed=9)
    db = connect(db_path)
    before = dict(db.execute("SELECT memory_id, seq FROM vector_log"))
    assert sorted(before.values()) == list(range(1, len(before) + 1))
    with db.transaction():
        db.vectors.drop(3)
        db.memories.erase(4, "2026-01-01T00:00:00.000Z")  # a hard forget drops it after
        db.vectors.drop(4)
    after = dict(db.execute("SELECT memory_id, seq FROM vector_log"))
    top = max(before.values())
    assert after[3] == top + 1 and after[4] == top + 2
    assert [c[1] for c in db.execute("PRAGMA table_info(vector_log)")] == ["memory_id", "seq"]


def test_a_vector_moved_to_another_project_is_searched_there(db_path: Path) -> None:
    build(db_path, 400, seed=10)
    db, original, index = warm_db(db_path)
    q = unit(np.random.default_rng(11))[0]
    db.vectors.knn(q.tobytes(), 1, ANY)
    other = connect(db_path)
    row = other.memories.get(7)
    assert row is not None
    with other.transaction():
        other.execute("UPDATE memories SET project = 'D', status = 'active', "
                      "superseded_by = NULL WHERE id = 7")
        other.vectors.put(7, q, project="D", type=row["type"], tier=row["tier"],
                                  created=0)
    for projects in (("D",), ("D", None), ("A", "B", "C"), None):
        f = MemoryFilter.search(projects=projects)
        found = db.vectors.knn(q.tobytes(), 5, f)
        assert hits(found) == hits(original.knn(q.tobytes(), 5, f)), projects
        assert (found[0].id == 7) == (projects is None or "D" in projects)
    assert 7 in held(index) and index.report()["projects"] == 5


def test_an_older_copy_written_over_the_file_in_place(db_path: Path, tmp_path: Path) -> None:
    """Same inode, same first step, same schema and model: the log going back tells."""
    import shutil

    build(db_path, 300, seed=12)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db_path, backup)  # every connection closed: no WAL to go with it
    db, _, index = warm_db(db_path)
    q = unit(np.random.default_rng(112))[0]
    other = connect(db_path)
    with other.transaction():
        add(other, 900, random.Random(2), q, project=None)
    assert db.vectors.knn(q.tobytes(), 1, ANY)[0].id == 900
    db.close()
    other.close()
    inode = os.stat(db_path).st_ino
    shutil.copyfile(backup, db_path)
    assert os.stat(db_path).st_ino == inode and not Path(f"{db_path}-wal").exists()
    db = connect(db_path, index=index)
    original = db.vectors._original
    assert hits(db.vectors.knn(q.tobytes(), 10, ANY)) == hits(original.knn(q.tobytes(), 10, ANY))
    assert 900 not in held(index) and index.report()["full_loads"] == 2


def test_threads_search_while_another_connection_writes(db_path: Path) -> None:
    import threading

    build(db_path, 600, seed=13)
    index = WarmIndex(db_path, 1 << 30)
    errors: list[BaseException] = []

    def searcher(seed: int) -> None:
        try:
            db = connect(db_path, index=index)
            rng = np.random.default_rng(seed)
            for _ in range(40):
                assert len(db.vectors.knn(unit(rng)[0].tobytes(), 5, ANY)) == 5
            db.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=searcher, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    writer, rng = connect(db_path), random.Random(3)
    vecs = unit(np.random.default_rng(14), 60)
    for i, v in enumerate(vecs):
        with writer.transaction():
            add(writer, 2000 + i, rng, v)
            writer.vectors.drop(1 + i)
    for t in threads:
        t.join()
    assert not errors
    db = connect(db_path, index=index)
    original = db.vectors._original
    q = unit(np.random.default_rng(15))[0].tobytes()
    assert hits(db.vectors.knn(q, 20, ANY)) == hits(original.knn(q, 20, ANY))
    assert held(index) == {r[0] for r in db.execute("SELECT memory_id FROM memories_vec")}


@pytest.mark.sqlite_only(reason="removes a SQLite schema step")
def test_a_read_command_does_without_the_vector_log(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Step 0008 is only the warm index's: a search on a file no writer has migrated since
    is answered, not refused as an older schema."""
    assert cli("add", "the staging deploy needs the vault token", "--type", "fact").exit_code == 0
    old = connect(db_path)
    with old.transaction():
        old.execute("DROP TABLE vector_log")
        old.execute("DELETE FROM _migrations WHERE name = '0008_vector_log'")
    old.close()
    found = cli("search", "vault token", "--json")
    assert found.exit_code == 0, found.stderr
    assert [r["text"] for r in found.records] == ["the staging deploy needs the vault token"]
    check = connect(db_path, mode="read", migrate=False)
    assert not check.has_table("vector_log")  # the read changed nothing
    check.close()


@pytest.mark.parametrize("more", [0, 1, 40])
def test_a_diverged_copy_written_over_the_file_in_place(db_path: Path, tmp_path: Path,
                                                        more: int) -> None:
    """An older copy written back over the same inode, then written to until its log is as
    long as the one the index saw, or longer: the index notices and loads it again."""
    import shutil

    build(db_path, 300, seed=14)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db_path, backup)
    db, _, index = warm_db(db_path)
    vrng = np.random.default_rng(114)
    q, q2 = unit(vrng)[0], unit(vrng)[0]
    other = connect(db_path)
    with other.transaction():  # here memory 900 gets q...
        add(other, 900, random.Random(3), q, project=None)
    assert db.vectors.knn(q.tobytes(), 1, ANY)[0].id == 900
    db.close()
    other.close()
    inode = os.stat(db_path).st_ino
    shutil.copyfile(backup, db_path)
    other = connect(db_path)
    with other.transaction():  # ...in the copy, another vector under the same number
        add(other, 900, random.Random(3), q2, project=None)
        for i in range(more):  # (and the copy's log goes further)
            add(other, 1000 + i, random.Random(i), unit(vrng)[0], project=None)
    other.close()
    assert os.stat(db_path).st_ino == inode
    db = connect(db_path, index=index)
    original = db.vectors._original
    for query in (q, q2):
        assert hits(db.vectors.knn(query.tobytes(), 10, ANY)) == \
            hits(original.knn(query.tobytes(), 10, ANY))
    assert index.report()["full_loads"] == 2
    assert holds(index, q2.astype("<f4").tobytes()) and not holds(index, q.astype("<f4").tobytes())
    db.close()
