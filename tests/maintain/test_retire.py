"""`hippo retire`: the pure rule with `now` passed in, and the job end to end."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hippo.errors import ConfigError
from hippo.maintain.retire import reason, windows
from hippo.maintain.settings import MaintainParams
from hippo.memory.memtypes import registry

NOW = datetime(2026, 6, 1, tzinfo=UTC)
TYPES = registry()
WIN = windows(MaintainParams().retire_days, TYPES)


def rec(**kw) -> dict:
    base = {"type": "task", "status": "active", "pinned": False, "canonical": False,
            "created_at": "2026-01-01T00:00:00.000Z", "confirmed_at": None}
    return {**base, **kw}


def test_reason_by_type_age_status_and_flags() -> None:
    assert reason(rec(), NOW, WIN, TYPES) == "age"  # 151 days > 90
    assert reason(rec(created_at="2026-03-10T00:00:00Z"), NOW, WIN, TYPES) is None  # 83 days
    assert reason(rec(created_at="2026-03-03T00:00:00Z"), NOW, WIN, TYPES) == "age"  # 90 days
    assert reason(rec(confirmed_at="2026-05-01T00:00:00Z"), NOW, WIN, TYPES) is None
    assert reason(rec(type="observability", created_at="2026-05-24T00:00:00Z"), NOW, WIN,
                  TYPES) == "age"  # 8 days > 7
    assert reason(rec(type="fact"), NOW, WIN, TYPES) is None
    assert reason(rec(status="done", created_at="2026-05-31T00:00:00Z"), NOW, WIN,
                  TYPES) == "done"
    assert reason(rec(pinned=True), NOW, WIN, TYPES) is None
    assert reason(rec(canonical=True, status="done"), NOW, WIN, TYPES) is None
    assert reason(rec(type="rule", status="done"), NOW, WIN, TYPES) is None


def test_windows_are_configurable_but_not_for_frozen_or_unknown_types() -> None:
    p = MaintainParams.from_table({"retire_days": {"task": 30, "insight": 400}})
    assert windows(p.retire_days, TYPES) == {"task": 30.0, "todo": 90.0,
                                             "observability": 7.0, "insight": 400.0}
    with pytest.raises(ConfigError, match="frozen"):
        windows({"decision": 10}, TYPES)
    with pytest.raises(ConfigError, match="unknown type 'nope'"):
        windows({"nope": 10}, TYPES)
    with pytest.raises(ConfigError, match="unknown setting"):
        MaintainParams.from_table({"treshold": 0.9})


def test_retire_job_dry_run_then_real_then_undo(cli, seed, db_path, check) -> None:
    seed([
        {"text": "old task", "type": "task", "created_at": "2026-01-01T00:00:00Z"},      # 1
        {"text": "fresh task", "type": "task", "created_at": "2026-05-20T00:00:00Z"},    # 2
        {"text": "old pinned task", "type": "task", "pinned": True,
         "created_at": "2026-01-01T00:00:00Z"},                                         # 3
        {"text": "finished", "type": "todo", "created_at": "2026-05-30T00:00:00Z"},      # 4
        {"text": "cpu spike at noon", "type": "observability",
         "created_at": "2026-05-20T00:00:00Z"},                                          # 5
        {"text": "old fact", "type": "fact", "created_at": "2020-01-01T00:00:00Z"},      # 6
        {"text": "human task", "type": "task", "author": "human",
         "created_at": "2026-01-01T00:00:00Z"},                                          # 7
    ])
    assert cli("done", "4").records[0]["status"] == "done"
    before = cli("export").stdout
    dry = cli("retire", "--dry-run", "--now", "2026-06-01T00:00:00Z")
    assert cli("export").stdout == before
    r = cli("retire", "--now", "2026-06-01T00:00:00Z")
    assert r.exit_code == 0, r.stderr
    events = [e for e in r.records if e["event"] == "retire"]
    assert [(e["id"], e["reason"]) for e in events] == [(1, "age"), (4, "done"), (5, "age"),
                                                         (7, "age")]
    assert [e for e in dry.records if e["event"] == "retire"] == events
    assert r.records[-1]["retired"] == 4 and r.records[-1]["done"] == 1
    status = {x["id"]: x["status"] for x in cli("export").records}
    assert status == {1: "retired", 2: "active", 3: "active", 4: "retired", 5: "retired",
                      6: "active", 7: "retired"}
    check(db_path)
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before
    check(db_path)
