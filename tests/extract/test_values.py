"""A named thing given a new value: the older machine memory is superseded, a person's becomes
a conflict (listed, counted, said at session start, never changed); near-misses stay apart."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hippo.extract.values import change, overturns


@pytest.mark.parametrize("new, old, expected", [
    ("We switched from Redux to Zustand for state management.",
     "We use Redux for global state, with RTK Query for data fetching.", True),
    # the old value named, but about something else
    ("We switched from Redux to Zustand for state management.",
     "Redux DevTools are installed in the browser.", False),
    ("The API server port is now 9090.", "The API server listens on port 8080.", True),
    # two ports of two services
    ("The billing service port is now 9090.", "The auth service listens on port 8081.", False),
    ("Use pnpm instead of npm for package installs.",
     "Run npm install to set up the frontend packages.", True),
    ("Use pnpm instead of npm for package installs.",
     "The npm registry mirror is configured in .npmrc.", False),
    ("`DB_POOL_SIZE` is now 20.", "The pool size defaults to 5 and is set by `DB_POOL_SIZE`.",
     True),
    ("Replaced moment with date-fns for date formatting.",
     "Dates are formatted with moment in utils/date.ts.", True),
    # it already says the new value
    ("The API server port is now 9090.", "The API server moved to port 9090 last week.", False),
    ("The auth service is now on port 4100.", "The auth service listens on port 4000.", True),
    # another service with a short name that differs: not the same port
    ("The auth service is now on port 4100.", "The payment service listens on port 4000.",
     False),
    # a constant an edit changed (`hippo.extract.written.constants`), not its namesake elsewhere
    ("`MAX_RETRIES` in `alpha/src/retry.py` is now 8", "`MAX_RETRIES` in `alpha/src/retry.py` is 5",
     True),
    ("`MAX_RETRIES` in `alpha/src/retry.py` is now 8", "`MAX_RETRIES` in `alpha/src/upload.py` is 5",
     False),
    # two tasks with similar titles
    ("The retry task for uploads is now closed.", "The retry task for downloads is open.", False),
])
def test_what_a_statement_of_change_overturns(new: str, old: str, expected: bool) -> None:
    chg = change(new)
    assert chg is not None
    assert overturns(chg, new, old) is expected


def test_no_statement_of_change_no_change() -> None:
    assert change("The API server listens on port 8080.") is None
    assert change("Let me check which port the server uses.") is None
    # "instead of" names a value only after a choice ("use", "went with"), and never a word
    # like "my" or "the usual"
    assert change("I've been playing strategy games instead of my usual shooters.") is None
    assert change("We switched from it to them last week.") is None
    # one plain word does not say which thing changed
    assert change("John is now at 5 miles a day.") is None


def _session(tmp_path: Path, name: str, sid: str, text: str, day: str) -> Path:
    from tests.extract.excerpts import claude_code

    return claude_code(tmp_path / name, sid, "/w/shop", [
        ("user", text), ("assistant", "Noted, I will keep that in mind for this project."),
    ], day=day)


def _changed(cli, tmp_path: Path) -> tuple:
    """Session one states a port; a person decided Redux; session two changes both."""
    one = _session(tmp_path, "a.jsonl", "11111111-1111-4111-8111-111111111111",
                   "The checkout service listens on port 8080 in development.", "2026-04-07")
    assert cli("ingest", str(one), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    # a person's decision, written before the session that changes it (an exported record)
    said = {"id": 900, "text": "We use Redux for global state in the web app.",
            "type": "decision", "project": "shop", "author": "human",
            "created_at": "2026-04-08T09:00:00.000Z", "updated_at": "2026-04-08T09:00:00.000Z",
            "valid_from": "2026-04-08T09:00:00.000Z"}
    (tmp_path / "person.jsonl").write_text(orjson.dumps(said).decode() + "\n")
    assert cli("import", str(tmp_path / "person.jsonl")).exit_code == 0
    auth = cli("add", "--project", "shop", "The auth service listens on port 8081.",
               "--type", "config").records[0]
    two = _session(tmp_path, "b.jsonl", "22222222-2222-4222-8222-222222222222",
                   "The checkout service port is now 9090. We switched from Redux to Zustand "
                   "for global state, because the store boilerplate slowed every change.",
                   "2026-04-09")
    assert cli("ingest", str(two), "--idle-minutes", "0").exit_code == 0
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--status", "all",
                                      "--json").records}
    return r, before, mems, auth


def test_a_new_value_supersedes_a_machine_memory_and_conflicts_with_a_persons(
        cli, tmp_path: Path) -> None:
    r, _, mems, auth = _changed(cli, tmp_path)
    old = mems["The checkout service listens on port 8080 in development."]
    new = next(m for t, m in mems.items() if t.startswith("The checkout service port is now"))
    assert old["superseded_by"] == new["id"] and old["valid_to"] == new["valid_from"]
    # a person's memory is never changed: the machine memory is a conflict for a person
    person = cli("show", "900", "--json").records[0]
    assert person["superseded_by"] is None and person["status"] == "active"
    assert mems[auth["text"]]["superseded_by"] is None  # another service's port
    zustand = next(m for t, m in mems.items() if "Zustand" in t)
    assert "conflict" in zustand["tags"] and "conflicts:900" in zustand["tags"]
    assert {e["action"] for e in r.records if e.get("event") == "memory"} >= \
        {"add", "superseded", "conflict"}
    listed = cli("list", "--project", "shop", "--conflicts", "--json").records
    assert [(c["id"], [o["id"] for o in c["conflicts_with"]]) for c in listed] == \
        [(zustand["id"], [900])]
    assert cli("stats", "--json").records[0]["brain"]["conflicts"] == 1
    bad = cli("list", "--conflicts", "--as-of", "yesterday")
    assert (bad.exit_code, bad.stderr) == (2, ("hippo: --conflicts lists the conflicts open "
                                           "now, in this project (or --all-projects); it does "
                                           "not take --as-of\n"))
    hook = cli("hook", "claude-code", "session-start", "--project", "shop",
               input='{"hook_event_name": "SessionStart", "cwd": "/w/shop"}')
    assert "1 machine-written memory contradicts a person's" in hook.stdout
    # a person settles it: what the machine learned replaces their memory
    assert cli("supersede", "900", "--by", str(zustand["id"])).exit_code == 0
    assert cli("list", "--project", "shop", "--conflicts", "--json").records == []
    assert cli("stats", "--json").records[0]["brain"]["conflicts"] == 0
    hook = cli("hook", "claude-code", "session-start", "--project", "shop",
               input='{"hook_event_name": "SessionStart", "cwd": "/w/shop"}')
    assert "contradict" not in hook.stdout


def test_undo_of_the_run_restores_the_export(cli, tmp_path: Path) -> None:
    r, before, _, _ = _changed(cli, tmp_path)
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before
