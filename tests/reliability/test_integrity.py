"""Issue 17's integrity findings: ids are never reused, provenance never points at another
session, read-modify-writes and id checks run under the write lock, dates have one form
and a range, a hostile `source` costs only its own line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import orjson
import pytest

from hippo.store import connect


def _session(path: Path, key: str, job: int, tech: str) -> Path:
    turns = [("user", f"How should job {job} be built?"),
             ("assistant", f"We decided to use {tech} for job {job}.")]
    path.write_text("".join(json.dumps({"session_id": key, "id": f"{key}-{i}", "role": role,
                                        "content": text}) + "\n"
                            for i, (role, text) in enumerate(turns)))
    return path


def _ingest_extract(cli, *paths: Path) -> dict:  # type: ignore[no-untyped-def]
    r = cli("ingest", *map(str, paths), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    return r.records[-1]


def _by_text(cli, word: str) -> dict:  # type: ignore[no-untyped-def]
    (rec,) = [m for m in cli("list", "--json", "--status", "all").records if word in m["text"]]
    return rec


def _lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# -- items 1 and 11: ids are never reused ----------------------------------------------

def test_issue_repro_forgotten_session_lends_no_ids_and_c_is_extracted(cli, tmp_path) -> None:
    a = _session(tmp_path / "a.jsonl", "A", 1, "redis")
    b = _session(tmp_path / "b.jsonl", "B", 2, "kafka")
    assert _ingest_extract(cli, a, b)["added"] == 2
    kafka = _by_text(cli, "kafka")
    r = cli("echo", "--forget-session", "B")
    assert r.exit_code == 0 and r.records[0]["memories"] == [kafka["id"]]
    b.unlink()
    c = _session(tmp_path / "c.jsonl", "C", 3, "postgres")
    summary = _ingest_extract(cli, c)
    assert summary["chunks"] == 1 and summary["added"] == 1  # C is extracted
    shown = cli("show", str(kafka["id"]), "--json").records[0]
    assert shown["provenance"] == []  # not session C's text
    assert shown["source"]["session"] == "B" and shown["source"]["forgotten"] == ["B"]
    assert shown["source"]["chunks"] == [] and shown["status"] == "active"
    postgres = _by_text(cli, "postgres")
    assert postgres["id"] > kafka["id"]
    prov = cli("show", str(postgres["id"]), "--json").records[0]["provenance"]
    assert [p["session_key"] for p in prov] == ["C"]
    assert prov[0]["chunk_id"] > kafka["source"]["chunks"][0]  # B's chunk id stays unused
    assert cli("stats", "--json").records[0]["extract"]["chunks_pending"] == 0
    assert all(c["ok"] for c in cli("doctor", "--json").records)


def test_reread_replaced_file_gets_new_chunk_ids_and_is_extracted(cli, tmp_path) -> None:
    path = _session(tmp_path / "s.jsonl", "S", 1, "redis")
    assert _ingest_extract(cli, path)["added"] == 1
    first = _by_text(cli, "redis")
    old_chunk = first["source"]["chunks"][0]
    _session(path, "S", 2, "a message queue written from scratch")  # replaced, new head
    summary = _ingest_extract(cli, path)
    assert summary["chunks"] == 1 and summary["added"] == 1
    new = _by_text(cli, "scratch")
    assert new["source"]["chunks"][0] > old_chunk
    assert cli("show", str(first["id"]), "--json").records[0]["provenance"] == []
    assert all(c["ok"] for c in cli("doctor", "--json").records)


def test_undo_then_add_never_reuses_the_id_and_force_undo_spares_the_new_memory(
        cli, tmp_path) -> None:
    path = _session(tmp_path / "s.jsonl", "S", 1, "redis")
    _ingest_extract(cli, path)
    extracted = _by_text(cli, "redis")
    run_id = cli("show", str(extracted["id"]), "--json").records[0]["history"][0]["run_id"]
    assert cli("undo", run_id).exit_code == 0
    fresh = cli("add", "--json", "an unrelated memory written later").records[0]
    assert fresh["id"] > extracted["id"]
    history = cli("show", str(fresh["id"]), "--json").records[0]["history"]
    assert [h["action"] for h in history] == ["add"]  # inherits nothing
    r = cli("undo", run_id, "--force")
    assert r.exit_code == 0, r.stderr
    assert cli("show", str(fresh["id"]), "--json").records[0]["status"] == "active"


def test_add_and_import_refuse_an_id_this_store_once_used(cli, tmp_path, db_path) -> None:
    path = _session(tmp_path / "s.jsonl", "S", 1, "redis")
    _ingest_extract(cli, path)
    gone = _by_text(cli, "redis")
    run_id = cli("show", str(gone["id"]), "--json").records[0]["history"][0]["run_id"]
    assert cli("undo", run_id).exit_code == 0
    r = cli("add", "-", input=_lines({"id": gone["id"], "text": "claims the old id"},
                                     {"text": "an id-less line is stored"}))
    assert r.exit_code == 3
    assert f"line 1: id {gone['id']} belonged to a memory this store no longer holds" in r.stderr
    assert [x["text"] for x in r.records] == ["an id-less line is stored"]
    r = cli("import", "-", input=_lines({"id": gone["id"], "text": "claims the old id"},
                                        {"id": 500, "text": "a new id is imported"}))
    assert r.exit_code == 3 and "line 1: id" in r.stderr
    texts = {m["text"] for m in cli("list", "--json").records}
    assert "a new id is imported" in texts and "claims the old id" not in texts


def _old_schema(path: Path) -> None:
    """A file as hippo left it before migration 0007, with ids that were already reused."""
    from hippo.store.sqlite.migrations import MIGRATIONS

    db = connect(path, migrate=False)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS:
        if name.startswith("0007"):
            break
        assert isinstance(sql, str)
        with db.transaction():
            db.execute(sql)
            db.execute("INSERT INTO _migrations VALUES (?, '2026-01-01T00:00:00Z')", (name,))
    rec = ("'fact', 'semantic', NULL, '[]', 0.5, 'human', 'active', 0, 0, 0.5, "
           "'100-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL, NULL, NULL, "
           "'{\"session\": \"S\"}', 'k', 'h'")
    with db.transaction():
        db.execute("INSERT INTO memories(id, text, type, tier, project, tags, importance, "
                   "author, status, pinned, canonical, confidence, created_at, updated_at, "
                   "confirmed_at, consolidated_into, superseded_by, source, dedup_key, "
                   f"content_hash) VALUES (1, 'zebra crossing facts', {rec}), "
                   f"(2, 'the consolidated one', {rec})")
        db.execute("UPDATE memories SET status = 'consolidated', consolidated_into = 1 "
                   "WHERE id = 2")
        db.execute("INSERT INTO audit(memory_id, actor, action, at) VALUES "
                   "(9, 'human', 'add', '2026-01-01T00:00:00Z')")  # an undone memory 9
        db.execute("INSERT INTO echo_sessions(id, session_key, format, source_path) "
                   "VALUES (1, 'S', 'generic', '/x')")
        db.execute("INSERT INTO echo_chunks(id, session_id, seq, source_path, roles, text, "
                   "content_hash, created_at) VALUES (3, 1, 0, '/x', 'user', 'hello', 'h', "
                   "'2026-01-01T00:00:00Z')")
        db.execute("INSERT INTO memory_sources VALUES (1, 3, '2026-01-01T00:00:00Z'), "
                   "(1, 7, '2026-01-01T00:00:00Z')")  # chunk 7 was forgotten
        db.execute("INSERT INTO watermarks(path, session_id, updated_at) VALUES "
                   "('/y', 4, '2026-01-01T00:00:00Z')")  # session 4 was forgotten
    db.close()


@pytest.mark.sqlite_only(reason="SQLite's migration 0007 (AUTOINCREMENT rebuild of an old file)")
def test_migration_0007_keeps_every_row_and_starts_above_every_used_id(db_path, cli) -> None:
    _old_schema(db_path)
    db = connect(db_path)
    for table in ("memories", "echo_sessions", "echo_chunks"):
        sql = db.scalar("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
        assert "AUTOINCREMENT" in sql, table
    seq = dict(db.execute("SELECT name, seq FROM sqlite_sequence"))
    assert (seq["memories"], seq["echo_sessions"], seq["echo_chunks"]) == (9, 4, 7)
    assert [tuple(r) for r in db.execute(
        "SELECT id, status, consolidated_into, created_at FROM memories ORDER BY id")] == [
        (1, "active", None, "0100-01-01T00:00:00.000Z"),
        (2, "consolidated", 1, "0100-01-01T00:00:00.000Z")]
    assert db.scalar("SELECT count(*) FROM memory_sources") == 2  # no cascade on rebuild
    assert db.rows("PRAGMA foreign_key_check") == []
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN "
                                      "('index', 'trigger')")}
    assert {"memories_dedup", "memories_scope", "memories_created", "memories_fts_ai",
            "memories_fts_ad", "memories_fts_au", "echo_fts_ai", "echo_chunks_time"} <= names
    assert db.scalar("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'zebra'") == 1
    with pytest.raises(apsw.ConstraintError):  # foreign keys still hold
        db.execute("UPDATE memories SET superseded_by = 99 WHERE id = 1")
    db.close()
    r = cli("add", "--json", "a memory after the upgrade")
    assert r.records[0]["id"] == 10
    assert cli("show", "1", "--json").records[0]["created_at"] == "0100-01-01T00:00:00.000Z"


# -- doctor --------------------------------------------------------------------------

def test_doctor_flags_a_link_into_another_session_and_fix_removes_it(cli, tmp_path,
                                                                     db_path) -> None:
    a = _session(tmp_path / "a.jsonl", "A", 1, "redis")
    b = _session(tmp_path / "b.jsonl", "B", 2, "kafka")
    _ingest_extract(cli, a, b)
    redis = _by_text(cli, "redis")
    db = connect(db_path)
    b_chunk = db.scalar("SELECT c.id FROM echo_chunks c JOIN echo_sessions e ON "
                        "e.id = c.session_id WHERE e.session_key = 'B'")
    db.execute("UPDATE memory_sources SET chunk_id = ? WHERE memory_id = ?",
               (b_chunk, redis["id"]))
    db.close()
    r = cli("doctor", "--json")
    bad = {c["check"]: c for c in r.records}["provenance-sessions"]
    assert r.exit_code != 0 and not bad["ok"]
    assert f"memory {redis['id']} -> chunk {b_chunk} of session B" in bad["detail"]
    r = cli("doctor", "--fix", "--json")
    assert {c["check"]: c for c in r.records}["provenance-sessions"]["fixed"]
    assert all(c["ok"] for c in cli("doctor", "--json").records)


def test_doctor_flags_supersede_and_consolidate_cycles(cli, db_path) -> None:
    ids = [cli("add", "--json", f"statement number {i}").records[0]["id"] for i in range(4)]
    db = connect(db_path)
    db.execute("UPDATE memories SET superseded_by = ? WHERE id = ?",
               (ids[1], ids[0]))
    db.execute("UPDATE memories SET superseded_by = ? WHERE id = ?",
               (ids[0], ids[1]))
    db.execute("UPDATE memories SET consolidated_into = ?, status = "
               "'consolidated' WHERE id = ?", (ids[2], ids[2]))
    db.close()
    r = cli("doctor", "--json")
    check = {c["check"]: c for c in r.records}["reference-cycles"]
    assert r.exit_code != 0 and not check["ok"]
    assert f"superseded_by cycle {ids[0]} -> {ids[1]} -> {ids[0]}" in check["detail"]
    assert f"consolidated_into cycle {ids[2]} -> {ids[2]}" in check["detail"]


# -- item 13: edit and import keep the store's own rules ---------------------------------

def test_edit_text_refuses_an_exact_copy_of_another_live_memory(cli) -> None:
    first = cli("add", "--json", "We deploy on Fridays").records[0]["id"]
    second = cli("add", "--json", "We deploy on Mondays").records[0]["id"]
    r = cli("edit", str(second), "--text", "we deploy on fridays.")
    assert r.exit_code == 2 and f"memory {first} already says this" in r.stderr
    assert cli("show", str(second), "--json").records[0]["text"] == "We deploy on Mondays"
    assert cli("edit", str(second), "--text", "We deploy on Tuesdays").exit_code == 0


def test_import_and_add_refuse_supersede_and_consolidate_cycles(cli) -> None:
    batch = _lines({"id": 1, "text": "one", "superseded_by": 2},
                   {"id": 2, "text": "two", "superseded_by": 1},
                   {"id": 3, "text": "three", "superseded_by": 3},
                   {"id": 4, "text": "four", "status": "consolidated", "consolidated_into": 5},
                   {"id": 5, "text": "five", "status": "consolidated", "consolidated_into": 4},
                   {"id": 6, "text": "six is fine", "superseded_by": 7},
                   {"id": 7, "text": "seven is fine"})
    r = cli("import", "-", input=batch)
    assert r.exit_code == 3, r.stderr
    for line in (1, 2, 3, 4, 5):
        assert f"line {line}: " in r.stderr and "makes a cycle" in r.stderr
    assert sorted(m["id"] for m in cli("list", "--json", "--status", "all").records) == [6, 7]
    r = cli("add", "-", input=_lines({"id": 8, "text": "eight", "superseded_by": 8},
                                     {"id": 9, "text": "nine", "superseded_by": 10},
                                     {"id": 10, "text": "ten", "superseded_by": 9},
                                     {"id": 11, "text": "eleven", "superseded_by": 6}))
    assert r.exit_code == 3 and "line 1: superseded_by makes a cycle (8 -> 8)" in r.stderr
    assert "line 3: superseded_by makes a cycle (9 -> 10 -> 9)" in r.stderr
    assert [m["id"] for m in r.records] == [11]
    assert all(c["ok"] for c in cli("doctor", "--json").records)


# -- items 4 and 5: concurrent writers ----------------------------------------------------


def _parallel(db_path: Path, argvs: list[list[str]], inputs: list[str | None],
              where: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start every process at once, each with its whole stdin ready (a file), so they race."""
    env = {**os.environ, "HIPPO_EMBEDDER": "hash", "HIPPO_BUSY_TIMEOUT_MS": "60000"}
    files = []
    for i, data in enumerate(inputs):
        path = where / f"stdin-{i}.jsonl"
        path.write_text(data or "")
        files.append(path.open())
    procs = [subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db_path), *argv],
                              stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
             for argv, fh in zip(argvs, files)]
    out = []
    for p, fh in zip(procs, files):
        stdout, stderr = p.communicate(timeout=300)
        fh.close()
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_eight_parallel_tag_edits_all_survive(cli, db_path, tmp_path) -> None:
    mid = cli("add", "--json", "a memory everyone tags").records[0]["id"]
    done = _parallel(db_path, [["edit", str(mid), "--tag", f"t{i}"] for i in range(8)],
                     [None] * 8, tmp_path)
    assert [p.returncode for p in done] == [0] * 8, [p.stderr for p in done]
    rec = cli("show", str(mid), "--json").records[0]
    assert rec["tags"] == [f"t{i}" for i in range(8)]
    assert [h["action"] for h in rec["history"]].count("edit") == 8


def test_parallel_batches_with_colliding_ids_each_store_their_own_lines(cli, db_path,
                                                                      tmp_path) -> None:
    cli("add", "a memory so the store exists")
    batches = [_lines(*({"id": 1000 + j, "text": f"batch {i} claims id {1000 + j}"}
                        for j in range(50)),
                      *({"text": f"batch {i} id-less line {j}"} for j in range(3)))
               for i in range(8)]
    done = _parallel(db_path, [["add", "-"]] * 8, batches, tmp_path)
    codes = sorted(p.returncode for p in done)
    assert codes == [0] + [3] * 7, [p.stderr[-300:] for p in done]
    for p in done:
        stored = [orjson.loads(line) for line in p.stdout.splitlines()]
        assert sum("id-less" in s["text"] for s in stored) == 3
        if p.returncode == 3:
            assert "skipped 50 bad lines" in p.stderr and "is taken by another memory" in p.stderr
    winners = {m["text"].split(" claims")[0] for m in cli("list", "--json", "--limit", "0").records
               if "claims" in m["text"]}
    assert len(winners) == 1  # all 50 ids went to one batch
    assert len(cli("list", "--json", "--limit", "0").records) == 1 + 50 + 8 * 3


# -- item 6: dates -------------------------------------------------------------------

def test_dates_one_padded_form_a_range_and_no_far_future(cli, tmp_path) -> None:
    r = cli("add", "-", input=_lines(
        {"text": "from antiquity", "type": "todo", "created_at": "0100-01-01"},
        {"text": "offset before year one", "created_at": "0001-01-01T00:00:00+14:00"},
        {"text": "offset past 9999", "created_at": "9999-12-31T23:59:59-14:00"},
        {"text": "a todo from the far future", "type": "todo", "created_at": "9999-01-01"},
        {"text": "ordinary", "created_at": "2026-06-01T12:00:00+02:00"}))
    assert r.exit_code == 3
    assert "line 2: created_at: time '0001-01-01T00:00:00+14:00' is outside the range" in r.stderr
    assert "line 3: created_at: time '9999-12-31T23:59:59-14:00' is outside" in r.stderr
    assert "line 4: created_at '9999-01-01' is in the future" in r.stderr
    assert "Traceback" not in r.stderr and "OverflowError" not in r.stderr
    got = {m["text"]: m["created_at"] for m in cli("list", "--json").records}
    assert got == {"from antiquity": "0100-01-01T00:00:00.000Z",
                   "ordinary": "2026-06-01T10:00:00.000Z"}
    exported = cli("export").stdout
    fresh = tmp_path / "fresh.db"
    r = cli("import", "-", input=exported, db=fresh)
    assert r.exit_code == 0, r.stderr
    assert cli("export", db=fresh).stdout == exported
    r = cli("retire")
    assert r.exit_code == 0, r.stderr
    assert any(e.get("event") == "retire" for e in r.records)
    for bound in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        for cmd in (["list", "--since", bound], ["echo", "x", "--since", bound]):
            r = cli(*cmd)
            assert r.exit_code == 2 and "outside the range" in r.stderr, (cmd, r.stderr)
    r = cli("list", "--since", "100000000d")
    assert r.exit_code == 2 and "Traceback" not in r.stderr


# -- item 7: hostile source --------------------------------------------------------------

def test_hostile_source_costs_only_its_own_line(cli) -> None:
    deep: dict = {}
    cur = deep
    for _ in range(300):
        cur["x"] = {}
        cur = cur["x"]
    big = {"blob": "x" * (2 << 20)}
    r = cli("add", "-", input=_lines({"text": "good before"}, {"text": "deep", "source": deep},
                                     {"text": "big", "source": big},
                                     {"text": "good after", "source": {"session": "S"}}))
    assert r.exit_code == 3, r.stderr
    assert "line 2: source is nested more than 32 levels deep" in r.stderr
    assert "line 3: source is 2097163 bytes as JSON; the limit is 1048576" in r.stderr
    assert {m["text"] for m in r.records} == {"good before", "good after"}
    r = cli("import", "-", input=_lines({"id": 50, "text": "deep", "source": deep},
                                        {"id": 51, "text": "kept"}))
    assert r.exit_code == 3 and "line 1: source is nested" in r.stderr
    assert "kept" in {m["text"] for m in cli("list", "--json").records}


# -- the cycle finder doctor and the import screen share ---------------------------------

def test_cycles_finds_exactly_the_nodes_that_lead_back_to_themselves() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from hippo.memory.screen import cycles

    @given(st.dictionaries(st.integers(1, 12), st.integers(1, 12), max_size=12))
    def check(edges: dict[int, int]) -> None:
        def returns(node: int) -> bool:
            cur, steps = edges.get(node), 0
            while cur is not None and steps <= len(edges):
                if cur == node:
                    return True
                cur, steps = edges.get(cur), steps + 1
            return False

        found = cycles(edges)
        on_cycle = [n for loop in found for n in loop]
        assert sorted(on_cycle) == sorted(n for n in edges if returns(n))
        for loop in found:
            assert loop[0] == min(loop)
            assert all(edges[a] == b for a, b in zip(loop, loop[1:] + loop[:1]))

    check()
