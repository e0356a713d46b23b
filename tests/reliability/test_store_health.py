"""`hippo stats` and `hippo doctor` say the same of the same store on either backend: the
store under test (a PostgreSQL schema on the postgres run) against a SQLite file written
by the same commands. Counts, groupings and their order (byte order, NULL first) agree."""

from __future__ import annotations

from pathlib import Path

import orjson

from hippo.store import connect

MEMORIES = [
    {"text": "Zebra builds run on the big runner", "type": "fact", "project": "Zeta"},
    {"text": "always rebase before merging", "type": "rule", "project": "alpha"},
    {"text": "a global preference for tabs", "type": "preference", "project": None},
    {"text": "use make stage to deploy", "type": "procedure", "project": "alpha",
     "author": "machine"},
    {"text": "the old deploy notes", "type": "fact", "project": "beta", "status": "retired"},
    {"text": "prefer small commits", "type": "preference", "project": "beta",
     "author": "machine"},
]


def _fill(cli, db, tmp_path: Path) -> None:
    lines = "".join(orjson.dumps(m).decode() + "\n" for m in MEMORIES)
    assert cli("add", "-", input=lines, db=db).exit_code == 0
    session = tmp_path / "s.jsonl"
    session.write_text('{"role": "user", "content": "we deploy with make stage"}\n'
                       '{"role": "assistant", "content": "noted, make stage it is"}\n')
    r = cli("ingest", str(session), "--idle-minutes", "0", "--format", "generic-jsonl", db=db)
    assert r.exit_code == 0, r.stderr


def _stats(cli, db) -> dict:
    r = cli("stats", "--json", db=db)
    assert r.exit_code == 0, r.stderr
    out = r.records[0]
    for key in ("database", "size_bytes", "session_jobs", "schema"):  # the backend's own
        out.pop(key)
    out["jobs"] = {job: run["outcome"] for job, run in out["jobs"].items()}  # ids, times
    return out


def test_stats_and_doctor_agree_with_sqlites(cli, db_path, tmp_path: Path) -> None:
    other = tmp_path / "sqlite" / "hippo.db"
    other.parent.mkdir()
    for db in (db_path, other):
        _fill(cli, db, tmp_path)
    here, there = _stats(cli, db_path), _stats(cli, other)
    assert here == there
    assert list(here["brain"]["by_project"]) == ["(global)", "Zeta", "alpha", "beta"]
    assert here["brain"]["unverified"] == 1 and here["echo"]["chunks"] >= 1
    assert cli("stats", "--json").records[0]["size_bytes"] > 0
    doc = [cli("doctor", "--json", db=db).records for db in (db_path, other)]
    assert [c["check"] for c in doc[0]] == [c["check"] for c in doc[1]]
    assert all(c["ok"] for c in doc[0] + doc[1])


def test_health_repairs_find_what_was_broken(cli, db_path, tmp_path: Path) -> None:
    _fill(cli, db_path, tmp_path)
    db = connect(db_path)
    try:
        assert db.health.integrity(5) == ["ok"] and db.health.pending_migrations() == []
        assert db.health.foreign_key_violations() == 0
        assert db.reindex.unembedded("brain") == [] and db.reindex.orphan_vectors("echo") == []
        chunk = db.reindex.chunks_to_embed([1, 10**6])
        assert [r["id"] for r in chunk] == [1] and "make stage" in chunk[0]["text"]
        db.reindex.drop_chunk_vector(1)
        assert db.reindex.unembedded("echo") == [1]
        assert db.stats.vector_count("brain") == 5
        assert db.stats.vector_count("echo") == db.chunks.count(every_project=True) - 1
        with db.transaction():
            db.memories.link(1, 999, "2026-01-01T00:00:00.000Z")
        assert db.health.dangling_provenance() == 1
        with db.transaction():
            db.health.drop_dangling_provenance()
        assert db.health.dangling_provenance() == 0
        assert [w[0] for w in db.watermarks.offsets()] == [str(tmp_path / "s.jsonl")]
        assert db.stats.memories_by("status", active=False) == {"active": 5, "retired": 1}
        assert db.stats.memory_count() == 6 and db.stats.memory_count(active=True) == 5
    finally:
        db.close()
    r = cli("doctor", "--fix", "--json")
    fixed = {c["check"]: c for c in r.records}
    assert fixed["vectors:echo"]["fixed"] == "embedded 1, removed 0"
    assert cli("doctor", "--json").exit_code == 0
