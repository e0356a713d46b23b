"""`hippo consolidate` end to end with the hash embedder: what merges, what never does,
dry runs, incremental runs, locks, the FTS backstop, and undo back to the same export."""

from __future__ import annotations

import os
from pathlib import Path

from hippo.config import is_server
from hippo.store import connect

# Every table of a PostgreSQL store's schema (the test's own).
PG_TABLES = ("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
             "ORDER BY tablename")
SQLITE_TABLES = ("SELECT name FROM sqlite_master WHERE type = 'table' "
                 "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")

CACHE = "the build cache lives in the hidden cache folder at the root of the repository checkout"
CACHE2 = CACHE + " today"
PORT = ("the local postgres server for the integration tests of the api listens on port {} "
        "on every developer laptop")
RELEASE = "to cut a release bump the version in pyproject then tag the commit and push the tag"


def dump(db_path: Path) -> dict[str, list]:
    """Every row of every real table (shadow tables of vec0 and FTS included)."""
    db = connect(db_path)
    names = [r[0] for r in db.execute(PG_TABLES if is_server(db_path) else SQLITE_TABLES)]
    out = {n: sorted(map(repr, db.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
    db.close()
    return out


def by_id(records: list[dict]) -> dict[int, dict]:
    return {r["id"]: r for r in records}


def seed_world(seed) -> None:
    seed([
        {"text": CACHE, "importance": 0.3, "source": {"session": "s1"}},           # 1
        {"text": CACHE2, "importance": 0.7, "tags": ["build"],
         "source": {"session": "s2"}},                                            # 2
        {"text": CACHE, "type": "rule"},                                          # 3 frozen
        {"text": CACHE2, "type": "rule"},                                         # 4 frozen
        {"text": CACHE2 + " again", "author": "human"},                           # 5 human
        {"text": CACHE + " pinned", "pinned": True},                              # 6 pinned
        {"text": CACHE + " canonical", "canonical": True},                        # 7 canonical
        {"text": CACHE, "project": "elsewhere"},                                  # 8 other project
        {"text": RELEASE, "type": "procedure", "confidence": 0.5},                # 9
        {"text": RELEASE + " afterwards", "type": "procedure", "confidence": 0.6},  # 10
        {"text": PORT.format(5432), "type": "config"},                            # 11
        {"text": PORT.format(5433), "type": "config"},                            # 12
    ])


def test_merges_only_what_may_merge(cli, seed, db_path, check) -> None:
    seed_world(seed)
    before = by_id(cli("export").records)
    r = cli("consolidate")
    assert r.exit_code == 0, r.stderr
    events = r.records
    assert [e["event"] for e in events] == ["veto", "merge", "merge", "summary"]
    veto, m1, m2, summary = events
    assert (veto["a"], veto["b"]) == (11, 12) and veto["reason"] == "literals differ: 5432 / 5433"
    assert (m1["survivor"], m1["absorbed"]) == (2, [1])
    assert m1["text"] == CACHE2 and m1["pairs"][0][:2] == [1, 2] and m1["pairs"][0][2] >= 0.93
    assert (m2["survivor"], m2["absorbed"]) == (10, [9])
    assert summary["mode"] == "full" and summary["why"] == "first run"
    assert summary["merged"] == 2 and summary["vetoed"] == 1 and summary["fts"] == "ok"
    after = by_id(cli("export").records)
    # The survivor: higher importance kept, tags and provenance unioned, inspectable history.
    assert after[2]["importance"] == 0.7 and after[2]["tags"] == ["build"]
    assert after[2]["source"] == {"session": ["s2", "s1"]}
    assert after[1]["status"] == "consolidated" and after[1]["consolidated_into"] == 2
    assert after[1]["text"] == CACHE  # the absorbed row stays as it was, inspectable
    # A learned procedure that repeats gains confidence: max(0.5, 0.6) + 0.4 * 0.2.
    assert after[10]["confidence"] == 0.68 and after[9]["status"] == "consolidated"
    for untouched in (3, 4, 5, 6, 7, 8, 11, 12):
        assert after[untouched] == before[untouched], untouched
    (shown,) = cli("show", "1", "--json").records
    assert [h["action"] for h in shown["history"]] == ["add", "consolidate"]
    assert shown["history"][-1]["run_id"] == summary["run_id"]
    assert shown["history"][-1]["actor"] == "consolidate"
    check(db_path)


def test_dry_run_prints_the_same_and_writes_nothing(cli, seed, db_path) -> None:
    seed_world(seed)
    state = dump(db_path)
    dry = cli("consolidate", "--dry-run")
    assert dry.exit_code == 0 and dump(db_path) == state
    real = cli("consolidate")
    strip = [{k: v for k, v in e.items() if k not in ("run_id", "dry_run", "seconds")}
             for e in dry.records]
    assert strip == [{k: v for k, v in e.items() if k not in ("run_id", "dry_run", "seconds")}
                     for e in real.records]


def test_consolidate_then_undo_restores_the_export(cli, seed, db_path, check) -> None:
    seed_world(seed)
    first = cli("export").stdout
    (summary,) = [e for e in cli("consolidate").records if e["event"] == "summary"]
    check(db_path)
    merged = cli("export").stdout
    r = cli("undo", summary["run_id"])
    assert r.exit_code == 0, r.stderr
    assert cli("export").stdout == first
    check(db_path)
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM keep_apart") == 2  # (1, 2) and (9, 10)
    # The nightly run does not merge them right back.
    again = cli("consolidate", "--full").records
    assert [e["reason"] for e in again if e["event"] == "veto"].count(
        f"kept apart since {r.records[-1]['run_id']} undid their merge") == 2
    assert not [e for e in again if e["event"] == "merge"]
    # Undoing the undo puts the merge back and lets them merge again.
    r2 = cli("undo", r.records[-1]["run_id"])
    assert r2.exit_code == 0, r2.stderr
    assert cli("export").stdout == merged
    assert db.scalar("SELECT count(*) FROM keep_apart") == 0
    check(db_path)


def test_incremental_runs_compare_only_what_changed(cli, seed, isolated_home) -> None:
    seed([{"text": f"fact number {i} about the subsystem called {w} in the tree",
           "importance": 0.5} for i, w in enumerate(["alpha", "beta", "gamma", "delta"])])
    first = cli("consolidate").records[-1]
    assert first["mode"] == "full" and first["merged"] == 0
    seed([{"text": "fact number 2 about the subsystem called gamma in the tree today"}])
    second = cli("consolidate").records
    assert second[-1]["mode"] == "incremental" and second[-1]["strategy"] == "knn"
    assert second[-1]["checked"] == 1
    assert [(e["survivor"], e["absorbed"]) for e in second if e["event"] == "merge"] == [(3, [5])]
    third = cli("consolidate").records[-1]
    assert third["mode"] == "incremental" and third["checked"] == 0  # its own merges: no
    cli("edit", "1", "--importance", "0.8")
    assert cli("consolidate").records[-1]["checked"] == 1  # anyone else's change: yes
    r = cli("consolidate", "--threshold", "0.5")
    assert r.records[-1]["mode"] == "full"
    assert r.records[-1]["why"] == "threshold lowered from 0.93"
    (isolated_home / "config.toml").write_text("[maintain]\nliteral_guard = false\n")
    assert cli("consolidate").records[-1]["why"] == "literal guard turned off"


def test_many_changes_take_the_scan_path(cli, seed, tmp_path, monkeypatch) -> None:
    (tmp_path / "home" / "config.toml").write_text("[maintain]\nknn_limit = 1\n")
    seed([{"text": f"note {i} about the very long build pipeline of service {i % 3}"}
          for i in range(6)])
    cli("consolidate")
    seed([{"text": "note 0 about the very long build pipeline of service 0 indeed"},
          {"text": "note 1 about the very long build pipeline of service 1 indeed"}])
    r = cli("consolidate").records
    assert r[-1]["strategy"] == "scan" and r[-1]["checked"] == 2
    assert sorted((e["survivor"], e["absorbed"]) for e in r if e["event"] == "merge") == [
        (1, [7]), (2, [8])]


def test_lock_held_exits_75(cli, seed, db_path) -> None:
    seed([{"text": CACHE}])
    db = connect(db_path)
    if is_server(db_path):  # the lock is the session's: another connection holds it
        from hippo.ops.jobs import acquire

        acquire(db, "job:consolidate", "consolidate-x")
    else:  # the lock is a row naming a live process
        db.execute("INSERT INTO locks(name, owner, pid, acquired_at) VALUES "
                   "('job:consolidate', 'consolidate-x', ?, 'now')", (os.getppid(),))
    r = cli("consolidate")
    assert r.exit_code == 75 and r.stdout == ""
    assert "consolidate is already running" in r.stderr and r.stderr.count("\n") == 1


def test_fts_backstop_rebuilds_a_broken_index(cli, seed, db_path, check) -> None:
    seed([{"text": CACHE}])
    db = connect(db_path)
    if is_server(db_path):  # a tsvector cannot drift from its text: an index left invalid
        db.execute("UPDATE pg_index SET indisvalid = false "
                   "WHERE indexrelid = to_regclass('memories_tsv')")
    else:
        db.execute("INSERT INTO memories_fts(rowid, text, tags) VALUES (999, 'ghost', '[]')")
    r = cli("consolidate")
    assert r.records[-1]["fts"] == "rebuilt"
    check(db_path)


def test_bad_threshold_is_a_usage_error(cli) -> None:
    r = cli("consolidate", "--threshold", "1.5")
    assert r.exit_code == 2


def test_member_changed_after_planning_is_skipped(cli, seed, db_path) -> None:
    from hippo.core import Hippo
    from hippo.maintain import consolidate
    from hippo.maintain.settings import MaintainParams
    from hippo.memory import brain

    seed([{"text": CACHE}, {"text": CACHE2}])
    h = Hippo.open(db_path, embedder="hash")
    p = consolidate.plan(h.db, h.types, MaintainParams())
    (c,) = p.clusters
    with h.db.transaction():
        brain.update(h.db, 1, {"importance": 0.9}, actor="human", action="edit")
        assert consolidate._apply(h.db, c, None, p.records, "run-x") is False
    assert brain.get(h.db, 1)["status"] == "active"
