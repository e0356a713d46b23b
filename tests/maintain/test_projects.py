"""`hippo project list|rename|merge`: everything keyed by project moves, dedup is kept, and
`hippo undo` restores every row exactly."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hippo.config import is_server
from hippo.project import Location, remember
from hippo.store import connect


@pytest.fixture(autouse=True)
def outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a directory in no repository (the suite itself may run in a worktree)."""
    monkeypatch.chdir(tmp_path)


def transcript(path: Path, cwd: str, session: str, words: str) -> None:
    lines = [
        {"cwd": cwd, "sessionId": session, "type": "user", "uuid": f"{session}-u",
         "parentUuid": None, "timestamp": "2026-03-01T10:00:00.000Z",
         "message": {"role": "user", "content": f"How does {words} work?"}},
        {"cwd": cwd, "sessionId": session, "type": "assistant", "uuid": f"{session}-a",
         "parentUuid": f"{session}-u", "timestamp": "2026-03-01T10:00:05.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": f"{words} runs through the job queue in batches."}]}},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


# What the vector filters see: vec0's own metadata columns; on PostgreSQL the rows the
# vectors belong to (its vector tables carry no metadata).
MEMORIES_VEC = "SELECT memory_id, project, type FROM memories_vec ORDER BY 1"
PG_MEMORIES_VEC = ("SELECT v.memory_id, coalesce(m.project, '') AS project, m.type "
                   "FROM memories_vec v JOIN memories m ON m.id = v.memory_id ORDER BY 1")
ECHO_VEC = "SELECT chunk_id, project FROM echo_vec ORDER BY 1"
PG_ECHO_VEC = ("SELECT v.chunk_id, coalesce(c.project, '') AS project "
               "FROM echo_vec v JOIN echo_chunks c ON c.id = v.chunk_id ORDER BY 1")


def snapshot(db_path: Path) -> dict[str, list[tuple]]:
    """Every row keyed by project, and what points at memories."""
    db = connect(db_path)
    try:
        q = {
            "memories": "SELECT * FROM memories ORDER BY id",
            "memories_vec": PG_MEMORIES_VEC if is_server(db_path) else MEMORIES_VEC,
            "sources": "SELECT memory_id, chunk_id FROM memory_sources ORDER BY 1, 2",
            "sessions": "SELECT id, session_key, project FROM echo_sessions ORDER BY id",
            "chunks": "SELECT id, project FROM echo_chunks ORDER BY id",
            "echo_vec": PG_ECHO_VEC if is_server(db_path) else ECHO_VEC,
            "dirs": "SELECT path, project, common_dir, seen_at FROM project_dirs ORDER BY 1",
            "keep_apart": "SELECT a, b FROM keep_apart ORDER BY 1, 2",
        }
        return {k: [tuple(r) for r in db.execute(sql)] for k, sql in q.items()}
    finally:
        db.close()


def populate(cli, seed, tmp_path: Path, db_path: Path) -> list[dict]:
    """`spotter-dov` (an old store's worktree project) and `spotter`, sharing a statement."""
    added = seed([
        {"text": "Run the tests with `make test`", "project": "spotter", "type": "procedure",
         "tags": ["ci"], "importance": 0.4},
        {"text": "run the tests with `make test`", "project": "spotter-dov", "type": "procedure",
         "tags": ["make"], "importance": 0.8, "pinned": True},
        {"text": "The queue batches 50 jobs", "project": "spotter-dov"},
        {"text": "Fix the flaky login test", "project": "spotter-dov", "type": "task",
         "status": "done"},
        {"text": "An old rule", "project": "spotter-dov", "type": "rule", "status": "retired",
         "author": "human"},
        {"text": "a fact of another project"},
    ])
    cli("forget", str(len(added) - 1), "--hard")  # a purged row keeps its own dedup key
    transcript(tmp_path / "t" / "a.jsonl", "/home/u/spotter-dov", "s-a", "the scheduler")
    transcript(tmp_path / "t" / "b.jsonl", "/home/u/spotter", "s-b", "the exporter")
    r = cli("ingest", str(tmp_path / "t"), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    db = connect(db_path)
    assert remember(db, Location("spotter-dov", "/home/u/spotter-dov", "/x/.git", True))
    db.close()
    return added


def test_list_shows_every_project_with_counts(cli, seed, tmp_path: Path, db_path: Path) -> None:
    populate(cli, seed, tmp_path, db_path)
    r = cli("project", "list", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.records == [
        {"project": "spotter", "active": 1, "memories": 1, "sessions": 1, "chunks": 1,
         "dirs": 0},
        {"project": "spotter-dov", "active": 2, "memories": 4, "sessions": 1, "chunks": 1,
         "dirs": 1},
        {"project": "testproj", "active": 1, "memories": 1, "sessions": 0, "chunks": 0,
         "dirs": 0},
    ]


def test_merge_moves_everything_folds_duplicates_and_undo_restores_exactly(
        cli, seed, tmp_path: Path, db_path: Path, check) -> None:
    populate(cli, seed, tmp_path, db_path)
    before, exported = snapshot(db_path), cli("export").stdout
    r = cli("project", "merge", "spotter-dov", "spotter")
    assert r.exit_code == 0, r.stderr
    *folds, summary = r.records
    assert folds == [{"event": "fold", "id": 2, "into": 1,
                      "text": "Run the tests with `make test`"}]
    assert summary == {"event": "summary", "job": "project", "run_id": summary["run_id"],
                       "dry_run": False, "action": "merge", "from": "spotter-dov",
                       "to": "spotter", "memories": 4, "folded": 1, "sessions": 1,
                       "chunks": 1, "dirs": 1}
    after = snapshot(db_path)
    assert {p for _, _, p in after["sessions"]} == {"spotter"}
    assert {p for _, p in after["chunks"]} == {"spotter"} == {p for _, p in after["echo_vec"]}
    assert {p for _, p, _ in after["memories_vec"]} == {"spotter", "testproj"}
    assert after["dirs"][0][:2] == ("/home/u/spotter-dov", "spotter")
    assert [x["project"] for x in cli("project", "list", "--json").records] == ["spotter",
                                                                          "testproj"]
    survivor, dup = (cli("show", i, "--json").records[0] for i in ("1", "2"))
    assert (survivor["status"], survivor["importance"], survivor["tags"], survivor["pinned"],
            survivor["confidence"]) == ("active", 0.8, ["ci", "make"], True, 0.6)
    assert (dup["status"], dup["consolidated_into"], dup["project"]) == ("consolidated", 1,
                                                                          "spotter")
    check(db_path)

    u = cli("undo", summary["run_id"])
    assert u.exit_code == 0, u.stderr
    assert u.records[-1]["moved_back"] == 4 and u.records[-1]["kept_apart"] == 0
    assert snapshot(db_path) == before
    assert cli("export").stdout == exported
    check(db_path)
    # The undo is a run too: undoing it merges again, exactly as the first time.
    redo = cli("undo", u.records[-1]["run_id"])
    assert redo.exit_code == 0, redo.stderr
    assert snapshot(db_path) == after
    check(db_path)


def test_after_a_merge_search_echo_and_dedup_see_one_project(cli, seed, tmp_path: Path,
                                                             db_path: Path) -> None:
    populate(cli, seed, tmp_path, db_path)
    assert cli("project", "merge", "spotter-dov", "spotter").exit_code == 0
    again = cli("add", "Run the tests with `make test`", "-t", "procedure", "-p", "spotter")
    assert [(x["action"], x["id"]) for x in again.records] == [("reinforced", 1)]
    found = cli("search", "queue batches jobs", "--project", "spotter", "--json").records
    assert found[0]["id"] == 3 and found[0]["project"] == "spotter"
    assert cli("search", "queue batches jobs", "--project", "spotter-dov", "--json",
               "--type", "fact").records == []
    echo = cli("echo", "scheduler job queue", "--project", "spotter", "--json").records
    assert {x["session"] for x in echo} == {"s-a", "s-b"}


def test_rename_and_its_undo(cli, seed, tmp_path: Path, db_path: Path, check) -> None:
    populate(cli, seed, tmp_path, db_path)
    before = snapshot(db_path)
    dry = cli("project", "rename", "spotter-dov", "spot", "--dry-run")
    assert dry.exit_code == 0 and dry.records[-1]["dry_run"] is True
    assert dry.records[-1]["run_id"] is None and snapshot(db_path) == before
    r = cli("project", "rename", "spotter-dov", "spot")
    assert r.exit_code == 0, r.stderr
    assert r.records == [{"event": "summary", "job": "project", "run_id": r.records[0]["run_id"],
                          "dry_run": False, "action": "rename", "from": "spotter-dov",
                          "to": "spot", "memories": 4, "folded": 0, "sessions": 1,
                          "chunks": 1, "dirs": 1}]
    listed = {x["project"]: x for x in cli("project", "list", "--json").records}
    assert "spotter-dov" not in listed and listed["spot"]["memories"] == 4
    check(db_path)
    assert cli("undo", r.records[0]["run_id"]).exit_code == 0
    assert snapshot(db_path) == before
    check(db_path)


def test_undo_refuses_rows_moved_again_unless_forced(cli, seed, tmp_path: Path,
                                                     db_path: Path) -> None:
    populate(cli, seed, tmp_path, db_path)
    first = cli("project", "rename", "spotter-dov", "spot").records[-1]["run_id"]
    db = connect(db_path)
    db.execute("UPDATE echo_sessions SET project = 'elsewhere' WHERE project = 'spot'")
    db.close()
    r = cli("undo", first)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == (f"hippo: 1 sessions, chunks or directories changed project after run "
                        f"{first}; undo the later runs first, or --force to overwrite those "
                        "changes\n")
    r = cli("undo", first, "--force")
    assert r.exit_code == 0 and r.records[-1]["forced"] is True
    assert {p for _, _, p in snapshot(db_path)["sessions"]} == {"spotter", "spotter-dov"}


def test_errors_and_exit_codes(cli, seed) -> None:
    seed([{"text": "a", "project": "one"}, {"text": "b", "project": "two"}])
    cases = [
        (("rename", "nope", "x"), 1, "hippo: no project 'nope'; `hippo project list` shows them\n"),
        (("rename", "one", "two"), 1, ("hippo: project 'two' already exists; `hippo project merge "
                                      "one two` moves everything of one into the other\n")),
        (("merge", "one", "three"), 1, ("hippo: no project 'three' to merge into; to give 'one' "
                                       "a new name, `hippo project rename one three`\n")),
        (("merge", "one", "one"), 2, "hippo: 'one' and 'one' are the same project\n"),
        (("rename", "one", " "), 2, "hippo: not a project name: ' '\n"),
        (("rename", "one", "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"), 2,
         ("hippo: the new project name looks like a secret (hippo would store it masked); "
          "choose another\n")),
    ]
    for args, code, err in cases:
        r = cli("project", *args)
        assert (r.exit_code, r.stdout, r.stderr) == (code, "", err), args
    r = cli("project", "rename", "one")
    assert r.exit_code == 2 and "Missing argument 'NEW'" in r.stderr
    assert [x["project"] for x in cli("export").records] == ["one", "two"]
