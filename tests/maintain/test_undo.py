"""`hippo undo`: exact restores from the audit log, refusals, and undoing an undo."""

from __future__ import annotations

from hippo.core import Hippo
from hippo.memory.records import from_input
from hippo.ops.jobs import job

TEXT = "the staging cluster is reachable through the bastion host in the eu region"


def test_undo_of_a_run_that_created_memories_removes_them(cli, seed, db_path, check) -> None:
    seed([{"text": "kept from before"}])
    before = cli("export").stdout
    h = Hippo.open(db_path, embedder="hash")
    with job(h.db, "extract") as run:
        mems = [from_input({"text": t, "author": "machine"}, h.types, default_project="testproj")
                for t in ("new one", "new two", "kept from before")]
        h.add(mems, actor="extract", run_id=run.id)
    h.close()
    added = cli("export").stdout
    r = cli("undo", run.id)
    assert r.exit_code == 0, r.stderr
    assert [(e["id"], e["action"]) for e in r.records if e["event"] == "restore"] == [
        (2, "remove"), (3, "remove"), (1, "restore")]  # 1 was reinforced
    assert cli("export").stdout == before
    check(db_path)
    r2 = cli("undo", r.records[-1]["run_id"])
    assert r2.exit_code == 0, r2.stderr
    assert cli("export").stdout == added
    check(db_path)


def test_undo_refuses_when_memories_changed_later(cli, seed, db_path, check) -> None:
    seed([{"text": TEXT}, {"text": TEXT + " today"}])
    run_id = cli("consolidate").records[-1]["run_id"]
    cli("edit", "2", "--importance", "0.9")
    r = cli("undo", run_id)
    assert r.exit_code == 1 and "changed after run" in r.stderr and "--force" in r.stderr
    assert r.stdout == ""
    r = cli("undo", run_id, "--force")
    assert r.exit_code == 0 and r.records[-1]["forced"] is True
    assert {x["status"] for x in cli("export").records} == {"active"}
    check(db_path)


def test_undo_dry_run_writes_nothing(cli, seed) -> None:
    seed([{"text": TEXT}, {"text": TEXT + " today"}])
    run_id = cli("consolidate").records[-1]["run_id"]
    merged = cli("export").stdout
    r = cli("undo", run_id, "--dry-run")
    assert [e["action"] for e in r.records if e["event"] == "restore"] == ["restore", "restore"]
    assert cli("export").stdout == merged


def test_unknown_run_and_reindex_runs(cli, seed) -> None:
    r = cli("undo", "nope-123")
    assert r.exit_code == 1 and r.stderr == (
        "hippo: no run with id 'nope-123'; `hippo stats` shows each job's last run\n")
    seed([{"text": "x"}])
    run_id = cli("reindex", "--embedder", "hash", "--force").records[-1]["run_id"]
    r = cli("undo", run_id)
    assert r.exit_code == 2 and "reindex --embedder PREVIOUS" in r.stderr


def test_undo_keeps_memories_others_point_at(cli, seed, db_path) -> None:
    seed([{"text": "use node 18"}])
    h = Hippo.open(db_path, embedder="hash")
    with job(h.db, "extract") as run:
        h.add([from_input({"text": "use node 20"}, h.types, default_project="testproj")],
              actor="extract", run_id=run.id)
    h.close()
    cli("supersede", "1", "--by", "2")
    r = cli("undo", run.id)
    assert r.exit_code == 1 and "referenced by memory 1" in r.stderr
    assert len(cli("export").records) == 2


def test_undoing_a_run_twice_names_the_undo_that_did_it(cli, seed, db_path, check) -> None:
    seed([{"text": TEXT}, {"text": TEXT + " today"}])
    run_id = cli("consolidate").records[-1]["run_id"]
    first = cli("undo", run_id)
    assert first.exit_code == 0, first.stderr
    undo_id = first.records[-1]["run_id"]
    again = cli("undo", run_id)
    assert again.exit_code == 1 and again.stdout == ""
    assert again.stderr == (f"hippo: run {run_id} was already undone by run {undo_id}; to "
                            f"bring its changes back, `hippo undo {undo_id}`\n")
    # Undoing the undo brings the merge back; then the merge can be undone once more.
    redo = cli("undo", undo_id)
    assert redo.exit_code == 0, redo.stderr
    assert cli("undo", run_id).exit_code == 0
    assert {x["status"] for x in cli("export").records} == {"active"}
    check(db_path)
