"""Machine-written rules and preferences reach a session unasked only once a person verified
or pinned them: `hippo context`, the session-start hook and guidance hold them back; search
finds them throughout; `hippo list --unverified` shows what waits; export/import keeps it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.extract.conftest import write_transcript
from tests.layers.test_hook import payload

LINT = "Always run make lint before you commit."
PUSH = "From now on, never push to main directly."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "alpha"
    (root / ".git").mkdir(parents=True)
    return root


def extract(cli, tmp_path: Path, session: str, *turns: str) -> list[dict]:
    """A transcript through the real ingest and extract jobs; the memory events."""
    folder = tmp_path / session
    folder.mkdir()
    write_transcript(folder / f"{session}.jsonl", session, [("user", t) for t in turns],
                     cwd="/home/dev/alpha")
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    return [e for e in r.records if e["event"] == "memory"]


def floor(cli, **kw: Path) -> tuple[str, str]:
    r = cli("context", "--project", "alpha", **kw)
    assert r.exit_code == 0, r.stderr
    return r.stdout, r.stderr


def session_start(cli, repo: Path) -> str:
    """The hook's rules: what it prints before the remember hint it ends with."""
    from hippo.layers.hint import section

    r = cli("hook", "claude-code", "session-start", "--plain",
            input=payload(repo, "SessionStart", source="startup"))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.endswith(section())
    return r.stdout.removesuffix(section()).removesuffix("\n")


def found(cli, query: str) -> list[int]:
    r = cli("search", query, "--project", "alpha", "--json")
    assert r.exit_code == 0, r.stderr
    return [x["id"] for x in r.records]


def unverified(cli, *args: str) -> list[int]:
    r = cli("list", "--unverified", "--project", "alpha", "--json", *args)
    assert r.exit_code == 0, r.stderr
    return [x["id"] for x in r.records]


def test_an_extracted_rule_waits_for_a_person(cli, tmp_path: Path, repo: Path) -> None:
    assert cli("add", "Write commit messages in English", "-t", "rule", "-p",
               "alpha").exit_code == 0
    ev = extract(cli, tmp_path, "s1", LINT, "ok", PUSH)
    assert [(e["action"], e["type"], e["text"]) for e in ev] == [
        ("add", "rule", LINT), ("add", "rule", PUSH)]
    lint, push = (e["id"] for e in ev)
    out, err = floor(cli)
    assert out == "## Rules (project: alpha)\n- Write commit messages in English\n"
    assert f"2 machine-written awaiting review: #{lint} #{push}" in err
    assert "hippo list --unverified" in err
    assert session_start(cli, repo) == out
    *_, summary = cli("context", "-p", "alpha", "--json").records
    assert (summary["unverified"], summary["unverified_ids"]) == (2, [lint, push])
    assert found(cli, "make lint")[:1] == [lint]  # search finds it all the same
    assert unverified(cli) == [push, lint]  # newest first, as `hippo list`

    # The same rule in another session reinforces it (confirmed_at set): still no person.
    again = extract(cli, tmp_path, "s2", "Reminder:", LINT)
    assert [(e["action"], e["id"]) for e in again] == [("reinforce", lint)]
    (rec,) = cli("show", str(lint), "--json").records
    assert rec["confirmed_at"] is not None and rec["verified_at"] is None
    assert LINT not in floor(cli)[0] and LINT not in session_start(cli, repo)
    assert unverified(cli) == [push, lint]

    # A person verifies it: it enters the floor and the hook; the other one still waits.
    (rec,) = cli("verify", str(lint), "--json").records
    assert rec["verified_at"] is not None and rec["author"] == "machine"
    out, err = floor(cli)
    assert f"- {LINT}\n" in out and PUSH not in out
    assert f"1 machine-written awaiting review: #{push})" in err
    assert session_start(cli, repo) == out
    assert found(cli, "make lint")[:1] == [lint]
    assert unverified(cli) == [push]

    # Re-extracted after the verification: it stays verified.
    extract(cli, tmp_path, "s3", "Once more:", LINT)
    assert f"- {LINT}\n" in floor(cli)[0]


def test_pinning_admits_and_unpinning_takes_it_out(cli, repo: Path) -> None:
    (rec,) = cli("add", PUSH, "-t", "rule", "-p", "alpha", "--author", "machine").records
    assert floor(cli)[0] == "" and session_start(cli, repo) == ""
    assert cli("pin", str(rec["id"])).exit_code == 0
    assert floor(cli)[0] == f"## Rules (project: alpha)\n- {PUSH}\n"
    assert session_start(cli, repo) == floor(cli)[0]
    assert unverified(cli) == []
    assert cli("unpin", str(rec["id"])).exit_code == 0
    out, err = floor(cli)
    assert out == "" and f"awaiting review: #{rec['id']}" in err
    assert unverified(cli) == [rec["id"]]


def test_list_unverified_lists_exactly_the_waiting_ones(cli) -> None:
    rows = [
        {"text": "human rule", "type": "rule"},
        {"text": "human preference", "type": "preference"},
        {"text": "machine rule", "type": "rule", "author": "machine"},
        {"text": "machine preference", "type": "preference", "author": "machine"},
        {"text": "machine fact", "type": "fact", "author": "machine"},
        {"text": "machine procedure", "type": "procedure", "author": "machine"},
        {"text": "pinned machine rule", "type": "rule", "author": "machine", "pinned": True},
        {"text": "verified machine rule", "type": "rule", "author": "machine",
         "verified_at": "2026-01-02T00:00:00Z"},
        {"text": "retired machine rule", "type": "rule", "author": "machine",
         "status": "retired"},
        {"text": "machine rule elsewhere", "type": "rule", "author": "machine",
         "project": "beta"},
        {"text": "global machine preference", "type": "preference", "author": "machine",
         "project": None},
    ]
    r = cli("add", "-", "-p", "alpha",
            input="\n".join(orjson.dumps(x).decode() for x in rows))
    assert r.exit_code == 0, r.stderr
    ids = {x["text"]: x["id"] for x in r.records}
    waiting = ["global machine preference", "machine preference", "machine rule"]
    assert unverified(cli) == [ids[t] for t in waiting]
    assert unverified(cli, "--type", "rule") == [ids["machine rule"]]
    assert set(unverified(cli, "--all-projects")) == {ids[t] for t in waiting} | {
        ids["machine rule elsewhere"]}
    (stats,) = cli("stats", "--json", "--project", "alpha").records
    assert stats["brain"]["unverified"] == 4
    assert stats["layers"]["rule_floor"]["unverified"] == 1
    assert stats["layers"]["rule_floor"]["memories"] == 3  # human, pinned and verified rules
    # Superseded: nothing to review, it cannot enter the floor anyway.
    assert cli("supersede", str(ids["machine rule"]), "--by",
               str(ids["human rule"])).exit_code == 0
    assert unverified(cli, "--type", "rule") == []


def test_a_machine_preference_in_guidance_waits_too(cli) -> None:
    rows = [{"text": "prefer small pull requests", "type": "preference", "tier": "procedural",
             "author": "machine", "tags": ["reviews"]},
            {"text": "deploy with make ship", "type": "procedure", "author": "machine",
             "tags": ["reviews"]}]
    r = cli("add", "-", "-p", "alpha", input="\n".join(orjson.dumps(x).decode() for x in rows))
    pref, proc = (x["id"] for x in r.records)
    g = cli("guidance", "-p", "alpha", "--topic", "reviews")
    # Machine procedures are guidance as before; the preference waits for a person.
    assert g.stdout == "## Guidance (project: alpha; topics: reviews)\n- deploy with make ship\n"
    assert f"1 machine-written awaiting review: #{pref})" in g.stderr
    assert cli("verify", str(pref)).exit_code == 0
    g = cli("guidance", "-p", "alpha", "--topic", "reviews")
    assert "- prefer small pull requests\n" in g.stdout and "awaiting review" not in g.stderr
    assert proc


def test_export_import_keeps_who_verified_what(cli, tmp_path: Path) -> None:
    texts = ["verified machine rule", "waiting machine rule", "pinned machine rule"]
    ids = [cli("add", t, "-t", "rule", "-p", "alpha", "--author", "machine").records[0]["id"]
           for t in texts]
    cli("verify", str(ids[0]))
    cli("pin", str(ids[2]))
    first = cli("export")
    other = tmp_path / "other.db"
    assert cli("import", "-", input=first.stdout, db=other).exit_code == 0
    assert cli("export", db=other).stdout == first.stdout
    shown = cli("context", "-p", "alpha", db=other)
    assert shown.stdout == floor(cli)[0] == (
        "## Rules (project: alpha)\n- pinned machine rule\n- verified machine rule\n")
    assert f"awaiting review: #{ids[1]})" in shown.stderr
    r = cli("list", "--unverified", "-p", "alpha", "--json", db=other)
    assert [x["id"] for x in r.records] == [ids[1]]
