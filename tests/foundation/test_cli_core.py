"""Core commands end to end: add/show/list/forget/pin/export/import/stats/config."""

from __future__ import annotations

from pathlib import Path

import orjson

from hippo.store import connect

NO_TERM_SQLITE = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zebra'"
NO_TERM_POSTGRES = "SELECT count(*) FROM memories WHERE tsv @@ to_tsquery('hippo_text', 'zebra')"


def test_add_show_list_stats_json(cli) -> None:
    r = cli("add", "Use apsw for sqlite-vec", "--type", "decision", "--project", "hippo")
    assert r.exit_code == 0, r.stderr
    (added,) = r.records
    assert added["action"] == "added" and added["type"] == "decision"
    r = cli("show", str(added["id"]), "--json")
    (rec,) = r.records
    assert rec["text"] == "Use apsw for sqlite-vec"
    assert rec["tier"] == "semantic" and rec["author"] == "human" and rec["project"] == "hippo"
    assert [h["action"] for h in rec["history"]] == ["add"]
    r = cli("list", "--json", "--project", "hippo")
    assert [x["id"] for x in r.records] == [added["id"]]
    assert list(r.records[0]) == [
        "id", "text", "type", "tier", "project", "tags", "importance", "author", "status",
        "pinned", "canonical", "confidence", "created_at", "updated_at", "confirmed_at",
        "verified_at", "consolidated_into", "superseded_by", "source", "valid_from",
        "valid_to"]
    (stats,) = cli("stats", "--json").records
    assert stats["brain"]["active"] == 1 and stats["brain"]["by_type"] == {"decision": 1}


def test_thousand_from_stdin_then_again(cli, db_path: Path) -> None:
    lines = "\n".join(orjson.dumps({"text": f"memory number {i} about topic {i % 37}",
                                    "type": "fact", "tags": [f"t{i % 5}"]}).decode()
                      for i in range(1000))
    r = cli("add", "-", input=lines)
    assert r.exit_code == 0, r.stderr
    assert len(r.records) == 1000
    db = connect(db_path)
    assert db.health.check_fulltext("memories_fts").error is None
    assert db.scalar("SELECT count(*) FROM memories") == 1000
    assert db.scalar("SELECT count(*) FROM memories_vec") == 1000
    (before,) = cli("stats", "--json").records
    r = cli("add", "-", input=lines)
    assert r.exit_code == 0
    assert {x["action"] for x in r.records} == {"reinforced"}
    (after,) = cli("stats", "--json").records
    assert after["brain"]["memories"] == 1000
    assert after["embed_cache"]["model_calls"] == before["embed_cache"]["model_calls"]
    assert after["embed_cache"]["texts_embedded"] == before["embed_cache"]["texts_embedded"]


def test_bad_lines_partial_and_atomic(cli, db_path: Path) -> None:
    data = '{"text": "good one"}\nnot json\n{"text": "bad", "type": "nope"}\n' \
           '{"text": "x", "importance": 2}\n{"text": "good two"}\n'
    r = cli("add", "--atomic", "-", input=data)
    assert r.exit_code == 1 and "line 2" in r.stderr and "nothing stored" in r.stderr
    assert r.stdout == ""
    assert connect(db_path).scalar("SELECT count(*) FROM memories") == 0
    r = cli("add", "-", input=data)
    assert r.exit_code == 3
    assert [x["text"] for x in r.records] == ["good one", "good two"]
    assert "line 2: not valid JSON" in r.stderr
    assert "line 3: unknown type 'nope'; known types:" in r.stderr
    assert "line 4: importance must be between 0 and 1" in r.stderr


def test_one_line_errors(cli, tmp_path: Path) -> None:
    r = cli("add", "x", "--type", "bogus")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "known types:" in r.stderr and "decision" in r.stderr
    r = cli("add", "x", "--importance", "1.5")
    assert r.exit_code == 2 and "importance must be between 0 and 1" in r.stderr
    r = cli("add", "x", db=tmp_path / "missing" / "h.db")
    assert r.exit_code == 1 and r.stderr.startswith("hippo: directory")
    r = cli("list", db=tmp_path / "missing" / "h.db")  # a read command: nothing to list
    assert r.exit_code == 0 and r.stderr.startswith("hippo: no database at")
    assert not (tmp_path / "missing").exists()
    assert cli("add", "a first memory").exit_code == 0
    r = cli("show", "999")
    assert r.exit_code == 1 and r.stderr == "hippo: no memory with id 999\n"


def test_newer_schema_exit_78(cli, db_path: Path) -> None:
    cli("add", "x")
    connect(db_path).execute("INSERT INTO _migrations VALUES ('0999_future', 'x')")
    r = cli("list")
    assert r.exit_code == 78 and "newer than this hippo" in r.stderr


def test_export_import_roundtrip_is_byte_identical(cli, tmp_path: Path) -> None:
    cli("add", "Always run the tests before pushing", "--type", "rule", "--tag", "ci")
    cli("add", "-", input='{"text": "old task", "type": "task", "status": "done", '
        '"created_at": "2025-01-02T03:04:05Z", "source": {"session": "s1", "lines": [3, 9]}}\n'
        '{"text": "global fact", "project": null, "author": "machine", "confidence": 0.8}\n')
    r = cli("add", "to be forgotten")
    cli("forget", str(r.records[0]["id"]))
    cli("pin", "1")
    first = cli("export")
    assert first.exit_code == 0 and len(first.records) == 4
    other = tmp_path / "other.db"
    r = cli("import", "-", input=first.stdout, db=other)
    assert r.exit_code == 0, r.stderr
    second = cli("export", db=other)
    assert second.stdout == first.stdout
    db = connect(other)
    assert db.scalar("SELECT count(*) FROM memories_vec") == db.scalar(
        "SELECT count(*) FROM memories WHERE status = 'active'") == 2
    r = cli("import", "-", input=first.stdout, db=other)
    assert r.exit_code == 1 and "already exist" in r.stderr


def test_forget_soft_and_hard(cli, db_path: Path) -> None:
    cli("add", "secret plan zebra-42")
    r = cli("forget", "1")
    assert r.records[0]["status"] == "deleted"
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM memories_vec") == 0
    r = cli("forget", "--hard", "1")
    assert r.exit_code == 0
    (rec,) = cli("show", "1", "--json").records
    assert rec["text"] == "" and rec["status"] == "deleted"
    assert all(h["before"] is None and h["after"] is None for h in rec["history"])
    # No term of the erased text is left in the full-text index.
    left = (NO_TERM_SQLITE if isinstance(db_path, Path) else NO_TERM_POSTGRES)
    assert db.scalar(left) == 0


def test_config_reports_origins(cli, monkeypatch) -> None:
    monkeypatch.setenv("HIPPO_IDLE_MINUTES", "5")
    rows = {r["name"]: r for r in cli("config", "--json").records}
    assert rows["idle_minutes"]["value"] == 5
    assert rows["idle_minutes"]["origin"] == "env HIPPO_IDLE_MINUTES"
    assert rows["embedder"]["origin"] == "flag"
    assert rows["project"]["value"] == "testproj"


def test_version_and_no_results_no_output(cli) -> None:
    r = cli("--version", db=None, embedder=None)
    assert r.stdout.startswith("hippo ")
    r = cli("list", "--json")
    assert r.exit_code == 0 and r.stdout == ""
