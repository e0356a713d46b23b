"""`hippo consolidate --merger llm`: the real `openai` client against a local chat server.

The model's statement is used only when it keeps every literal of the members and adds none;
otherwise, and whenever the endpoint fails, the rule-based statement stays. Undo restores
what the model wrote over; a missing key or a bad flag stops before anything changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hippo.maintain.llm_merge import check, prompt
from hippo.paid import spend
from hippo.store import connect
from tests.extract.fake_openai import FakeOpenAI, Reply
from tests.maintain.conftest import jsonl
from tests.maintain.test_consolidate import CACHE, CACHE2, RELEASE, by_id, dump

PORT = "the api server of the billing service listens on port 8080 behind the proxy"
PORT2 = PORT + " in production"
MERGED_CACHE = ("Today the build cache lives in the hidden cache folder at the root of the "
                "repository checkout.")


def rec(text: str, i: int = 1, created: str = "2026-03-01T10:00:00Z") -> dict[str, Any]:
    return {"id": i, "text": text, "type": "fact", "project": "testproj", "created_at": created}


def answer(text: str) -> str:
    return json.dumps({"text": text})


def restate_last(request: dict[str, Any]) -> Reply:
    """Default: "Merged: " + the newest statement shown (adds no literal, drops none)."""
    lines = re.findall(r"^\d+\. \(\S+\) (.+)$", request["messages"][1]["content"], re.MULTILINE)
    return Reply(answer("Merged: " + lines[-1]))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=restate_last) as fake:
        yield fake


@pytest.fixture
def llm(cli, server: FakeOpenAI, isolated_home: Path) -> Callable[..., Any]:
    (isolated_home / "config.toml").write_text(
        '[extract]\nmodel = "fake-model"\ntimeout = 0.5\nmax_retries = 0\n', encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
    return lambda *args: cli("consolidate", "--merger", "llm", *args, env=env)


def seed_pairs(seed) -> None:
    seed([
        {"text": CACHE, "importance": 0.3},                                   # 1
        {"text": CACHE2, "importance": 0.7},                                  # 2
        {"text": RELEASE, "type": "procedure"},                               # 3 survives
        {"text": RELEASE + " afterwards", "type": "procedure"},               # 4
        {"text": PORT, "type": "config"},                                     # 5 survives
        {"text": PORT2, "type": "config"},                                    # 6
    ])


def merges(records: list[dict]) -> dict[int, dict]:
    return {e["survivor"]: e for e in records if e["event"] == "merge"}


# -- the check of the model's statement ---------------------------------------------------

def test_check_accepts_a_faithful_statement() -> None:
    members = [rec(PORT), rec(PORT2, 2)]
    text, problems = check(answer("  The billing api server listens on port 8080\n behind the "
                                  "proxy in production. "), members)
    assert problems == []
    assert text == "The billing api server listens on port 8080 behind the proxy in production."
    assert check(answer("In production the billing API listens on port 8080 behind the proxy."),
                 members)[1] == []  # an acronym's case is no new literal


@pytest.mark.parametrize(("reply", "problem"), [
    (answer("The billing api server sits behind the proxy."), "it drops 8080"),
    (answer("The billing api listens on port 8080 (TLS on 8443)."),
     "it adds 8443, tls, which no statement says"),
    (answer("The billing api never listens on port 8080."),
     "it changes whether the statement is negated"),
    (answer("port 8080 " * 40), ("the statement is 399 characters, more than the 164 of the "
                                "statements together")),
    ("8080", 'the answer has no "text" string'),
    ('{"text": "  "}', 'the answer has no "text" string'),
    ("not json", "the answer is not JSON"),
])
def test_check_names_what_is_wrong(reply: str, problem: str) -> None:
    assert problem in check(reply, [rec(PORT), rec(PORT2, 2)])[1]


def test_negation_kept_is_fine_and_the_prompt_lists_oldest_first() -> None:
    members = [rec("Never force-push to main.", 1, "2026-03-05T00:00:00Z"),
               rec("Do not force-push to the main branch.", 2, "2026-03-01T00:00:00Z")]
    assert check(answer("Never force-push to the main branch."), members)[1] == []
    system, user = prompt(members)
    assert system["role"] == "system" and "exactly as written" in system["content"]
    assert user["content"].endswith("1. (2026-03-01) Do not force-push to the main branch.\n"
                                    "2. (2026-03-05) Never force-push to main.")
    assert user["content"].startswith("Type: fact\nProject: testproj\n")


# -- end to end ----------------------------------------------------------------------------

def test_model_statements_become_survivors_and_undo_restores(llm, cli, seed, server, db_path,
                                                             check) -> None:
    seed_pairs(seed)
    server.script = [Reply(answer(MERGED_CACHE))]
    before = cli("export").stdout
    r = llm()
    assert r.exit_code == 0, r.stderr
    m = merges(r.records)
    assert sorted(m) == [2, 3, 5]
    assert m[2]["merger"] == "llm" and m[2]["text"] == MERGED_CACHE
    assert m[2]["changes"]["text"] == MERGED_CACHE
    assert m[3]["text"] == "Merged: " + RELEASE + " afterwards"
    summary = r.records[-1]
    assert summary["merger"] == "llm" and summary["llm_calls"] == 3
    assert summary["llm_fallbacks"] == 0 and summary["llm_retries"] == 0
    after = by_id(cli("export").records)
    assert after[2]["text"] == MERGED_CACHE and after[1]["status"] == "consolidated"
    check(db_path)  # FTS in sync with the new text, vec0 rows == active memories
    found = cli("search", "Today the build cache lives", "--json").records
    assert found[0]["id"] == 2 and found[0]["text"] == MERGED_CACHE
    # The requests: the extract model, strict structured output, the key.
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["model"] == "fake-model"
    assert req["auth"] == "Bearer sk-test"
    fmt = req["response_format"]["json_schema"]
    assert fmt["name"] == "statement" and fmt["strict"] is True
    assert "maxLength" not in json.dumps(fmt["schema"])
    assert "1. (" in req["messages"][1]["content"] and CACHE2 in req["messages"][1]["content"]
    # Undo puts back the original rows exactly.
    assert cli("undo", summary["run_id"]).exit_code == 0
    assert cli("export").stdout == before
    check(db_path)


def test_an_unfaithful_statement_is_asked_again_then_left(llm, cli, seed, server) -> None:
    seed_pairs(seed)
    dropped = Reply(answer("The api server of the billing service sits behind the proxy."))
    server.default = lambda request: dropped
    server.script = [Reply(answer(MERGED_CACHE)), Reply(answer(RELEASE))]
    r = llm()
    assert r.exit_code == 0, r.stderr
    m = merges(r.records)
    assert m[2]["merger"] == "llm" and m[3]["merger"] == "llm"
    assert m[5]["merger"] == "rules" and m[5]["text"] == PORT2
    assert m[5]["fallback"] == "the model's statement was invalid twice (it drops 8080)"
    retry = server.requests[-1]["messages"]
    assert retry[-1]["content"] == "That statement cannot be used: it drops 8080. Answer again."
    summary = r.records[-1]
    assert (summary["llm_calls"], summary["llm_retries"], summary["llm_fallbacks"]) == (4, 1, 1)
    assert by_id(cli("export").records)[5]["text"] == PORT2


def test_a_rejected_request_keeps_the_rule_statement_for_that_cluster(llm, seed,
                                                                      server) -> None:
    seed_pairs(seed)
    server.script = [Reply(status=400)]
    r = llm()
    assert r.exit_code == 0, r.stderr
    m = merges(r.records)
    assert m[2]["merger"] == "rules" and m[2]["text"] == CACHE2
    assert m[2]["fallback"].startswith("request rejected (HTTP 400)")
    assert m[3]["merger"] == m[5]["merger"] == "llm"  # the endpoint is up: others are asked


@pytest.mark.parametrize("failure", [Reply(status=500), Reply(status=429),
                                     Reply(answer("late"), delay=1.5)],
                         ids=["500", "429", "timeout"])
def test_a_provider_down_leaves_the_rest_of_the_run_to_the_rules(llm, cli, seed, server,
                                                                 db_path, check,
                                                                 failure: Reply) -> None:
    seed_pairs(seed)
    server.script = [failure]
    r = llm()
    assert r.exit_code == 0, r.stderr
    m = merges(r.records)
    assert [m[i]["merger"] for i in (2, 3, 5)] == ["rules"] * 3
    assert len(server.requests) == 1  # no request after the endpoint went down
    assert m[2]["fallback"] == m[5]["fallback"] and "try again later" in m[2]["fallback"]
    assert m[2]["text"] == CACHE2 and m[5]["text"] == PORT2
    summary = r.records[-1]
    assert (summary["llm_calls"], summary["llm_fallbacks"], summary["merged"]) == (1, 3, 3)
    check(db_path)
    db = connect(db_path)
    try:
        assert spend.status(db, "openai-chat")["consecutive_failures"] == 1
    finally:
        db.close()


def test_a_refused_key_stops_the_run_with_exit_78(llm, cli, seed, server, db_path,
                                                  check) -> None:
    seed_pairs(seed)
    before = cli("export").stdout
    server.script = [Reply(status=401)]
    r = llm()
    assert r.exit_code == 78
    assert r.stderr.strip().splitlines() == [
        "hippo: openai-chat refused the API key (HTTP 401); check OPENAI_API_KEY"]
    assert cli("export").stdout == before  # the batch in progress wrote nothing
    check(db_path)
    assert llm().exit_code == 0  # the next run (default reply) does the work


def test_an_open_circuit_sends_nothing(llm, seed, server, db_path) -> None:
    seed_pairs(seed)
    db = connect(db_path)
    try:
        for _ in range(3):
            spend.record_failure(db, "openai-chat", "earlier outage")
    finally:
        db.close()
    r = llm()
    assert r.exit_code == 0, r.stderr
    assert server.requests == []
    assert all(e["merger"] == "rules" and "circuit" in e["fallback"]
               for e in merges(r.records).values())


def test_identical_statements_need_no_model(llm, cli, tmp_path, server) -> None:
    # `hippo add` reinforces a repeated text instead; an import can hold two such rows.
    other = tmp_path / "other.db"
    rows = [{"text": CACHE, "author": "machine"}, {"text": "placeholder", "author": "machine"}]
    assert cli("add", "-", input=jsonl(rows), db=other).exit_code == 0
    exported = cli("export", db=other).records
    exported[1]["text"] = CACHE.capitalize() + "."
    assert cli("import", "-", input=jsonl(exported)).exit_code == 0
    r = llm()
    assert r.exit_code == 0, r.stderr
    (m,) = merges(r.records).values()
    assert m["merger"] == "rules" and m["fallback"] == "the statements are the same"
    assert server.requests == []


def test_dry_run_asks_nothing_and_writes_nothing(llm, seed, server, db_path) -> None:
    seed_pairs(seed)
    state = dump(db_path)
    r = llm("--dry-run")
    assert r.exit_code == 0, r.stderr
    assert server.requests == [] and dump(db_path) == state
    assert {e["fallback"] for e in merges(r.records).values()} == {
        "a dry run does not ask the model"}


def test_missing_key_and_bad_merger_stop_before_anything_changes(cli, seed, db_path,
                                                                 isolated_home) -> None:
    seed_pairs(seed)
    state = dump(db_path)
    r = cli("consolidate", "--merger", "llm")
    assert r.exit_code == 78
    assert r.stderr.strip().splitlines() == [
        ("hippo: OPENAI_API_KEY is not set; export it (and OPENAI_BASE_URL for another "
        "server) or use --merger rules")]
    r = cli("consolidate", "--merger", "gpt")
    assert r.exit_code == 2 and "unknown merger 'gpt'; known: llm, rules" in r.stderr
    (isolated_home / "config.toml").write_text('[maintain]\nmerger = "gpt"\n')
    r = cli("consolidate")
    assert r.exit_code == 78 and "[maintain] merger must be one of rules, llm" in r.stderr
    assert dump(db_path) == state
