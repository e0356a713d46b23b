"""`hippo extract` end to end: provenance, watermark, write-time dedup, dry run, lock, kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.store import connect
from tests.extract.conftest import links, memories, meta

DECISION = "We decided to use PostgreSQL for the event store."
ALPHA = ("alpha-1", [("user", "hi, can you look at the storage layer?"),
                     ("assistant", "Sure. Bash: ls"),
                     ("user", f"ok so {DECISION[0].lower()}{DECISION[1:]}"),
                     ("tool", "We decided to use MySQL. TODO: never shown"),
                     ("user", "TODO: add an index on events.created_at")])


def test_extract_writes_machine_memories_with_provenance(cli, ingest, db_path: Path) -> None:
    ingest(ALPHA)
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    events = r.records
    mems = [e for e in events if e["event"] == "memory"]
    assert [(e["action"], e["type"], e["text"]) for e in mems] == [
        ("add", "decision", DECISION), ("add", "todo", "TODO: add an index on events.created_at")]
    session = next(e for e in events if e["event"] == "session")
    assert session == {"event": "session", "session": "alpha-1", "project": "alpha", "chunks": 1,
                       "first_chunk": 1, "last_chunk": 1, "status": "extracted",
                       "candidates": 2, "added": 2, "reinforced": 0, "linked": 0, "skipped": 0,
                       "done": 0, "superseded": 0}
    summary = events[-1]
    assert summary["event"] == "summary" and summary["added"] == 2 and summary["watermark"] == 1
    assert summary["run_id"].startswith("extract-")
    rec = memories(db_path)[0]
    assert rec["author"] == "machine" and rec["project"] == "alpha" and rec["tier"] == "semantic"
    assert rec["importance"] == 0.8 and rec["confidence"] == 0.5 and rec["status"] == "active"
    assert rec["source"]["chunks"] == [1] and rec["source"]["session"] == "alpha-1"
    assert rec["source"]["file"].endswith("alpha-1.jsonl") and rec["source"]["lines"] == [1, 5]
    assert links(db_path) == [(1, 1), (2, 1)]
    # `hippo show` prints the source text through memory_sources.
    shown = cli("show", "1", "--json").records[0]
    assert shown["provenance"][0]["chunk_id"] == 1
    assert "user: ok so we decided to use PostgreSQL" in shown["provenance"][0]["text"]
    assert [h["action"] for h in shown["history"]] == ["add", "link"]
    assert {h["run_id"] for h in shown["history"]} == {summary["run_id"]}


def test_rerun_writes_nothing_new(cli, ingest, db_path: Path) -> None:
    ingest(ALPHA)
    cli("extract")
    before = memories(db_path), links(db_path)
    again = cli("extract")
    assert again.exit_code == 0
    assert [e["event"] for e in again.records] == ["summary"]
    assert again.records[0]["sessions"] == 0 and again.records[0]["watermark"] == 1
    assert (memories(db_path), links(db_path)) == before


def test_same_decision_in_two_sessions_is_one_memory_with_two_links(cli, ingest,
                                                                     db_path: Path) -> None:
    ingest(ALPHA)
    first = cli("extract").records
    assert first[-1]["added"] == 2
    ingest(("alpha-2", [("user", "Reminder for the new teammate:"),
                        ("user", DECISION)]))
    r = cli("extract")
    ev = [e for e in r.records if e["event"] == "memory"]
    assert [(e["action"], e["id"], e["similarity"]) for e in ev] == [("reinforce", 1, 1.0)]
    mem = memories(db_path)[0]
    assert mem["confidence"] == pytest.approx(0.6) and mem["confirmed_at"] is not None
    assert mem["source"]["session"] == ["alpha-1", "alpha-2"]
    assert mem["source"]["chunks"] == [1, 2]
    assert [c for m, c in links(db_path) if m == 1] == [1, 2]
    assert len(memories(db_path)) == 2


def test_near_duplicate_reinforces_and_human_memories_are_never_touched(cli, ingest,
                                                                        db_path: Path) -> None:
    human = "Always run the migrations before the integration tests."
    assert cli("add", human, "--type", "rule", "--project", "alpha").exit_code == 0
    before = memories(db_path)[0]
    ingest(("alpha-1", [("user", "always run the migrations before the integration tests"),
                        ("user", "We decided to keep the CLI in one binary."),
                        ("user", "Keep the CLI in one binary, we decided to.")]))
    r = cli("extract")
    ev = [(e["action"], e.get("match"), e.get("reason")) for e in r.records
          if e["event"] == "memory"]
    # the session's second wording of the decision folds into its first (one candidate)
    assert ev == [("skip", 1, "covered by human memory 1"), ("add", None, None)]
    assert memories(db_path)[0] == before
    assert all(m != 1 for m, _ in links(db_path))
    # Same words in another order: the hash embedder gives cosine 1, a different dedup key.
    ingest(("alpha-2", [("user", "To keep the CLI in one binary, we decided.")]))
    r = cli("extract")
    (e,) = [e for e in r.records if e["event"] == "memory"]
    assert (e["action"], e["id"]) == ("reinforce", 2) and e["similarity"] >= 0.93
    assert len(memories(db_path)) == 2


def test_a_grown_session_repeating_itself_only_adds_links(cli, tmp_path: Path,
                                                          db_path: Path) -> None:
    from tests.extract.conftest import write_transcript

    path = tmp_path / "live.jsonl"
    turns = [("user", DECISION)]
    write_transcript(path, "live", turns)
    cli("ingest", str(path), "--idle-minutes", "0")
    cli("extract")
    repeat = "As I said: we decided to use PostgreSQL for the event store!"
    write_transcript(path, "live", [*turns, ("assistant", "ok"), ("user", repeat)])
    cli("ingest", str(path), "--idle-minutes", "0")
    r = cli("extract")
    (e,) = [e for e in r.records if e["event"] == "memory"]
    assert (e["action"], e["id"]) == ("link", 1)
    mem = memories(db_path)[0]
    assert mem["confidence"] == 0.5 and mem["confirmed_at"] is None
    assert links(db_path) == [(1, 1), (1, 2)] and mem["source"]["chunks"] == [1, 2]


def test_other_projects_and_types_are_not_duplicates(cli, ingest, db_path: Path) -> None:
    ingest(("alpha-1", [("user", DECISION)]))
    ingest(("beta-1", [("user", DECISION)]), cwd="/home/dev/beta")
    cli("extract")
    assert sorted((m["project"], m["text"]) for m in memories(db_path)) == [
        ("alpha", DECISION), ("beta", DECISION)]


def test_dry_run_reports_and_writes_nothing(cli, ingest, db_path: Path) -> None:
    ingest(ALPHA, ("alpha-2", [("user", DECISION)]))
    dry = cli("extract", "--dry-run")
    assert dry.exit_code == 0
    ev = [(e["action"], e["id"], e.get("reason")) for e in dry.records if e["event"] == "memory"]
    # The second session's repeat is seen against what the first would add.
    assert ev == [("add", None, None), ("add", None, None),
                  ("reinforce", None, "repeats a memory this run would add")]
    assert dry.records[-1]["dry_run"] is True and "run_id" not in dry.records[-1]
    assert memories(db_path) == [] and links(db_path) == []
    assert meta(db_path, "extract.last_chunk_id") is None
    assert connect(db_path).scalar("SELECT count(*) FROM runs WHERE job = 'extract'") == 0
    real = cli("extract")
    assert [(e["action"], e["id"]) for e in real.records if e["event"] == "memory"] == [
        ("add", 1), ("add", 2), ("reinforce", 1)]


def test_session_option_reextracts_without_moving_the_watermark(cli, ingest,
                                                                db_path: Path) -> None:
    ingest(ALPHA)
    cli("extract")
    r = cli("extract", "--session", "alpha-1")
    ev = [(e["action"], e["reason"]) for e in r.records if e["event"] == "memory"]
    assert ev == [("skip", "already linked to memory 1"), ("skip", "already linked to memory 2")]
    assert meta(db_path, "extract.last_chunk_id") == "1"
    missing = cli("extract", "--session", "nope")
    assert missing.exit_code == 1 and "no Echo session 'nope'" in missing.stderr


def test_lock_held_is_exit_75(cli, ingest, db_path: Path) -> None:
    import os

    ingest(ALPHA)
    db = connect(db_path)
    with db.transaction():
        db.jobs.take_lock("job:extract", "extract-other", os.getppid(), "2026-01-01T00:00:00Z")
    r = cli("extract")
    assert r.exit_code == 75 and "extract is already running" in r.stderr
    assert r.stdout == "" and memories(db_path) == []


def test_unknown_extractor_is_a_usage_error(cli) -> None:
    r = cli("extract", "--extractor", "magic")
    assert r.exit_code == 2 and r.stderr.strip() == (
        "hippo: unknown extractor 'magic'; known: agent, llm, rules")


def test_unknown_extractor_in_the_config_is_exit_78(cli, isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text('[extract]\nextractor = "magic"\n')
    r = cli("extract")
    assert r.exit_code == 78 and "[extract] extractor in" in r.stderr
    (isolated_home / "config.toml").write_text('[extract]\nsimilarity = 2\n')
    r = cli("extract")
    assert r.exit_code == 78
    assert r.stderr.strip() == "hippo: [extract] similarity must be a number in (0, 1], got 2"


def test_a_failure_mid_run_keeps_finished_sessions_and_loses_none(cli, ingest, db_path: Path,
                                                                  monkeypatch) -> None:
    """Each session commits with the watermark; the one in progress leaves no trace."""
    from hippo.errors import BusyError
    from hippo.extract import rules

    ingest(("alpha-1", [("user", DECISION)]), ("alpha-2", [("user", "Never log tokens.")]),
           ("alpha-3", [("user", "I prefer tabs.")]))
    real = rules.RulesExtractor.extract
    seen: list[str] = []

    def flaky(self, session):
        seen.append(session.key)
        if session.key == "alpha-2":
            raise BusyError("simulated stop")
        return real(self, session)

    monkeypatch.setattr(rules.RulesExtractor, "extract", flaky)
    r = cli("extract")
    assert r.exit_code == 75 and r.stderr.strip() == "hippo: simulated stop"
    assert r.records[-1]["stopped"] == "simulated stop" and r.records[-1]["watermark"] == 1
    assert [m["text"] for m in memories(db_path)] == [DECISION]
    monkeypatch.setattr(rules.RulesExtractor, "extract", real)
    r = cli("extract")
    assert r.exit_code == 0
    assert [m["text"] for m in memories(db_path)] == [DECISION, "Never log tokens.",
                                                      "I prefer tabs."]
    run = connect(db_path).rows("SELECT outcome FROM runs WHERE job = 'extract' ORDER BY started_at, id")
    assert [x["outcome"] for x in run] == ["stopped", "ok"]


def test_undo_reverts_an_extract_run(cli, ingest, db_path: Path) -> None:
    ingest(ALPHA)
    run_id = cli("extract").records[-1]["run_id"]
    r = cli("undo", run_id)
    assert r.exit_code == 0, r.stderr
    assert memories(db_path) == [] and links(db_path) == []


def test_sigkill_inside_a_session_loses_nothing_and_repeats_nothing(ingest, hippo_proc, cli,
                                                                     db_path: Path) -> None:
    ingest(("alpha-1", [("user", DECISION)]), ("alpha-2", [("user", "Never log tokens.")]),
           ("alpha-3", [("user", "I prefer tabs.")]))
    killed = hippo_proc(["--embedder", "hash", "extract"],
                        env={"HIPPO_FAILPOINT": "extract.txn:2"})
    assert killed.returncode == -9
    assert [m["text"] for m in memories(db_path)] == [DECISION]
    assert meta(db_path, "extract.last_chunk_id") == "1"
    r = cli("extract")
    assert r.exit_code == 0 and r.records[-1]["added"] == 2
    assert [m["text"] for m in memories(db_path)] == [DECISION, "Never log tokens.",
                                                      "I prefer tabs."]
    assert links(db_path) == [(1, 1), (2, 2), (3, 3)]
    runs = connect(db_path).rows("SELECT outcome FROM runs WHERE job = 'extract' ORDER BY started_at, id")
    assert [x["outcome"] for x in runs] == ["killed", "ok"]
