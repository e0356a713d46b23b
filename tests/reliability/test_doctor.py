"""`hippo doctor` finds each kind of inconsistency and `--fix` repairs it."""

from __future__ import annotations

from pathlib import Path

from hippo.config import is_server
from hippo.store import connect


def checks(result) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    return {r["check"]: r for r in result.records}


def test_healthy_database_passes(cli) -> None:
    cli("add", "a healthy memory")
    r = cli("doctor", "--json")
    assert r.exit_code == 0 and all(c["ok"] for c in r.records)
    store = [c for c in r.records if not c["check"].startswith("agent")]
    assert len(store) == 13  # then the agents `hippo setup` set up (tests/setup)


def test_missing_and_stale_vectors_are_repaired(cli, db_path: Path) -> None:
    cli("add", "-", input='{"text": "one"}\n{"text": "two"}\n{"text": "three"}\n')
    db = connect(db_path)
    db.execute("DELETE FROM memories_vec WHERE memory_id = 1")
    db.execute("UPDATE memories SET status = 'retired' WHERE id = 2")  # behind brain's back
    r = cli("doctor", "--json")
    assert r.exit_code == 1
    assert "1 active memories without a vector, 1 vectors" in checks(r)["vectors:brain"]["detail"]
    r = cli("doctor", "--fix", "--json")
    assert r.exit_code == 0 and checks(r)["vectors:brain"]["fixed"] == "embedded 1, removed 1"
    assert cli("doctor", "--json").exit_code == 0
    assert sorted(x[0] for x in db.execute("SELECT memory_id FROM memories_vec")) == [1, 3]


def test_broken_fts_is_rebuilt(cli, db_path: Path) -> None:
    cli("add", "full text index entry")
    db = connect(db_path)
    if is_server(db_path):  # a generated tsvector cannot drift from its text: a GIN index
        db.execute("UPDATE pg_index SET indisvalid = false "  # left invalid can
                   "WHERE indexrelid = to_regclass('memories_tsv')")
    else:  # remove the index entry behind the triggers' back: it no longer matches its table
        db.execute("INSERT INTO memories_fts(memories_fts, rowid, text, tags) "
                   "VALUES ('delete', 1, 'full text index entry', '[]')")
    r = cli("doctor", "--json")
    assert r.exit_code == 1 and not checks(r)["fts:memories_fts"]["ok"]
    r = cli("doctor", "--fix", "--json")
    assert checks(r)["fts:memories_fts"]["fixed"]
    assert cli("doctor", "--json").exit_code == 0
    assert [m["text"] for m in cli("search", "index", "--json").records] == ["full text index entry"]


def test_dangling_provenance_and_watermarks(cli, db_path: Path, tmp_path: Path) -> None:
    cli("add", "memory with a source")
    f = tmp_path / "t.jsonl"
    f.write_text('{"role": "user", "content": "hello there"}\n')
    cli("ingest", str(f), "--idle-minutes", "0", "--format", "generic-jsonl")
    db = connect(db_path)
    db.execute("INSERT INTO memory_sources(memory_id, chunk_id, added_at) VALUES (1, 999, 'x')")
    f.write_text("")  # the file shrank below its watermark
    r = cli("doctor", "--json")
    assert not checks(r)["provenance"]["ok"] and not checks(r)["watermarks"]["ok"]
    r = cli("doctor", "--fix", "--json")
    assert r.exit_code == 0
    assert cli("doctor", "--json").exit_code == 0
