"""The jobs, spend, consolidation, project-move and reindex repositories on their own (the
jobs' tests cover the rest)."""

from __future__ import annotations

from pathlib import Path

from hippo.store import connect


def test_jobs_locks_and_runs(db_path: Path) -> None:
    db = connect(db_path)
    jobs = db.jobs
    with db.transaction():
        assert jobs.lock_holder("job:x") is None
        jobs.take_lock("job:x", "run-1", 4242, "2026-01-01T00:00:00.000Z")
        assert jobs.lock_holder("job:x") == {"owner": "run-1", "pid": 4242,
                                             "acquired_at": "2026-01-01T00:00:00.000Z"}
        jobs.release_lock("job:x", "someone-else")
        assert jobs.lock_holder("job:x") is not None
        jobs.release_lock("job:x", "run-1")
        assert jobs.lock_holder("job:x") is None

        jobs.start_run("x-1", "x", "2026-01-01T00:00:00.000Z")
        jobs.start_run("x-2", "x", "2026-01-01T00:00:01.000Z")
        jobs.mark_killed("x")
        assert jobs.get_run("x-1") == {"id": "x-1", "job": "x", "outcome": "killed"}
        assert jobs.get_run("nope") is None
        for n, at in ((1, "01"), (2, "02")):
            jobs.start_run(f"undo-{n}", "undo", f"2026-01-02T00:00:{at}.000Z")
            jobs.finish_run(f"undo-{n}", "2026-01-02T00:01:00.000Z", "ok", '{"undid": "x-2"}')
        jobs.start_run("undo-3", "undo", "2026-01-02T00:00:03.000Z")
        jobs.finish_run("undo-3", "2026-01-02T00:01:00.000Z", "failed", '{"undid": "x-2"}')
        assert jobs.undoes_of("x-2") == ["undo-2", "undo-1"]  # newest first, ok ones only
        assert jobs.undoes_of("x-1") == []
    db.close()


def test_spend_state(db_path: Path) -> None:
    db = connect(db_path)
    spend = db.spend
    with db.transaction():
        assert spend.state("p") is None
        spend.ensure("p", "2026-01-01")
        spend.count_call("p", 10)
        spend.count_call("p", 5)
        assert spend.state("p") == {"day": "2026-01-01", "calls": 2, "tokens": 15,
                                    "consecutive_failures": 0, "open_until": None,
                                    "last_error": None}
        spend.start_day("p", "2026-01-01")  # the same day: nothing changes
        assert spend.state("p")["calls"] == 2
        spend.failed("p", "boom", 2, 100.0)
        assert spend.state("p")["open_until"] is None  # one failure of two
        spend.failed("p", "boom again", 2, 100.0)
        row = spend.state("p")
        assert (row["consecutive_failures"], row["open_until"], row["last_error"]) == (
            2, 100.0, "boom again")
        spend.succeeded("p", -100)
        row = spend.state("p")
        assert (row["tokens"], row["consecutive_failures"], row["open_until"]) == (0, 0, None)
        spend.start_day("p", "2026-01-02")
        assert (spend.state("p")["day"], spend.state("p")["calls"]) == ("2026-01-02", 0)
    db.close()


def test_consolidation_projects_and_reindex_lookups(seed, db_path: Path) -> None:
    seed([{"text": "use port 5432", "type": "config", "project": "a"},
          {"text": "run the linter first", "type": "procedure", "project": "b"}])
    db = connect(db_path)
    c, moves, v = db.consolidation, db.projects, db.reindex
    with db.transaction():
        assert c.last_audit_id() >= 2
        assert c.candidates() == [(1, "config", "a"), (2, "procedure", "b")]
        assert sorted(c.changed_since(0, "consolidate")) == [1, 2]
        assert c.changed_since(c.last_audit_id(), "consolidate") == []
        assert [r["id"] for r in db.memories.get_many([2, 1, 99])] == [1, 2]
        assert db.vectors.has("brain")
        found = db.vectors.embeddings([1, 99])
        vec = found[1]
        assert list(found) == [1]
        near = db.vectors.nearest(vec, 4, type="config", project="a")
        assert near[0][0] == 1 and abs(near[0][1]) < 1e-6
        assert sorted(i for i, *_ in v.memory_vectors()) == [1, 2]
        assert db.health.check_fulltext("memories_fts").error is None
        assert c.pointing_at(1) == []
        assert c.same_statement("no-such-key", 1) is None
        assert moves.exists("a") and not moves.exists("c")
        assert [r["id"] for r in moves.memories("a")] == [1]
        assert moves.counts()[0] == ("memories", "a", 1, 1)
        assert c.run_changes("no-such-run") == []
        assert [r["id"] for r in c.retire_candidates(["procedure"])] == [2]
        assert c.kept_apart() == []
        c.keep_apart(1, 2, "undo-1", "2026-01-01T00:00:00.000Z")
        c.keep_apart(1, 2, "undo-1", "2026-01-01T00:00:00.000Z")  # once
        assert c.kept_apart() == [(1, 2, "undo-1")]
        c.drop_kept_apart("undo-1")
        assert c.kept_apart() == []
        assert not v.has_side_table("brain") and v.vector_count("brain") == 2
        assert [(t, k) for t, k, _ in v.texts("brain", [2, 99])] == [(2, "run the linter first")]
        assert dict(v.content_hashes("brain")).keys() == {1, 2}
    db.close()
