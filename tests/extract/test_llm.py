"""The `llm` extractor end to end: the real `openai` client against a local fake server.

Valid answers, invalid JSON, schema violations, foreign evidence, 400/429/500, timeouts,
spend caps and the circuit breaker (seen by a second process); nothing half-stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hippo.paid import spend
from hippo.store import connect
from tests.extract.conftest import links, memories, meta
from tests.extract.fake_openai import FakeOpenAI, Reply
from tests.extract.fake_openai import memories as answer

DECISION = "We decided to store events in PostgreSQL."
S1 = ("alpha-1", [("user", "let's settle the storage question"), ("user", DECISION),
                  ("assistant", "Bash: psql -c 'select 1'"), ("tool", "1")])
S2 = ("alpha-2", [("user", "reminder: storage is postgres"), ("assistant", "Noted.")])


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def config(isolated_home: Path) -> Callable[..., None]:
    def write(extra: str = "") -> None:
        (isolated_home / "config.toml").write_text(
            '[extract]\nextractor = "llm"\nmodel = "fake-model"\ntimeout = 0.5\n'
            f"max_retries = 0\n{extra}", encoding="utf-8")

    write()
    return write


@pytest.fixture
def llm(cli, server: FakeOpenAI, config) -> Callable[..., object]:
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
    return lambda *args: cli("extract", *args, env=env)


def guard_state(db_path: Path) -> dict:
    db = connect(db_path)
    try:
        return spend.status(db, "openai-chat")
    finally:
        db.close()


def test_valid_answers_become_memories_with_provenance(llm, ingest, server, db_path) -> None:
    ingest(S1, S2)
    ingest(("beta-1", [("user", "we use postgres here too")]), cwd="/home/dev/beta")
    r = llm()
    assert r.exit_code == 0, r.stderr
    ev = [(e["action"], e["session"], e["id"]) for e in r.records if e["event"] == "memory"]
    assert ev == [("add", "alpha-1", 1), ("reinforce", "alpha-2", 1), ("add", "beta-1", 2)]
    first = memories(db_path)[0]
    assert first["text"] == "The alpha project stores events in PostgreSQL (decided on 2026-03-02)."
    assert (first["type"], first["author"], first["importance"]) == ("decision", "machine", 0.8)
    assert first["tags"] == ["db", "storage"] and first["confidence"] == pytest.approx(0.68)
    assert first["source"]["extractor"] == "llm"
    assert first["source"]["session"] == ["alpha-1", "alpha-2"]
    assert links(db_path) == [(1, 1), (1, 2), (2, 3)]
    summary = r.records[-1]
    assert summary["llm_calls"] == 3 and summary["llm_retries"] == 0
    # The request: the model, structured output, the key, and the transcript with chunk ids.
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["model"] == "fake-model"
    assert req["auth"] == "Bearer sk-test"
    fmt = req["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == ["memories"]
    prompt = req["messages"][1]["content"]
    assert "[chunk 1]" in prompt and DECISION in prompt and "Project: alpha" in prompt
    assert "self-contained" in req["messages"][0]["content"]
    state = guard_state(db_path)
    assert (state["calls"], state["tokens"], state["consecutive_failures"]) == (3, 360, 0)


def test_dry_run_asks_the_model_and_counts_the_spend_but_writes_nothing(llm, ingest, server,
                                                                         db_path) -> None:
    ingest(S1)
    r = llm("--dry-run")
    assert r.exit_code == 0
    assert [(e["action"], e["id"]) for e in r.records if e["event"] == "memory"] == [
        ("add", None)]
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None
    assert guard_state(db_path)["calls"] == 1  # the call was made: the guard remembers it


def test_invalid_json_is_retried_once(llm, ingest, server, db_path) -> None:
    ingest(S1)
    server.script = [Reply('{"memories": [{"type": "decision", "text": "trunc')]
    r = llm()
    assert r.exit_code == 0, r.stderr
    assert len(server.requests) == 2 and r.records[-1]["llm_retries"] == 1
    retry = server.requests[1]["messages"]
    assert retry[-1]["role"] == "user" and retry[-1]["content"].startswith(
        "That answer is invalid: not JSON")
    assert len(memories(db_path)) == 1


@pytest.mark.parametrize("bad, problem", [
    ({"type": "vibe", "text": "Events live in PostgreSQL.", "importance": 0.5, "tags": [],
      "evidence": [1]}, "is not one of"),
    ({"type": "decision", "text": "Events live in PostgreSQL.", "importance": 3, "tags": [],
      "evidence": [1]}, "is above 1"),
    ({"type": "decision", "text": "Events live in PostgreSQL.", "importance": 0.5,
      "tags": []}, "missing 'evidence'"),
    ({"type": "decision", "text": "Events live in PostgreSQL.", "importance": 0.5, "tags": [],
      "evidence": [999]}, "chunk(s) [999] are not in this transcript"),
])
def test_invalid_twice_skips_the_session_and_stores_nothing(llm, ingest, server, db_path,
                                                            bad, problem) -> None:
    ingest(S1, ("alpha-2", [("user", "second session")]))
    # The first session's answer is half good, half bad, twice: nothing of it is stored.
    good = {"type": "fact", "text": "Events live in PostgreSQL.", "importance": 0.5,
            "tags": [], "evidence": [1]}
    server.script = [Reply(answer(good, bad)), Reply(answer(good, bad))]
    r = llm()
    assert r.exit_code == 3, r.stderr
    skipped = [e for e in r.records if e["event"] == "session" and e["status"] == "skipped"]
    assert [e["session"] for e in skipped] == ["alpha-1"] and problem in skipped[0]["reason"]
    assert [m["source"]["session"] for m in memories(db_path)] == ["alpha-2"]
    assert r.records[-1]["sessions_skipped"] == 1 and meta(db_path, "extract.last_chunk_id") == "2"
    # Reported and past the watermark: a re-run does not ask again.
    again = llm()
    assert again.exit_code == 0 and len(server.requests) == 3


def test_http_400_skips_the_session(llm, ingest, server, db_path) -> None:
    ingest(S1)
    server.script = [Reply(status=400)]
    r = llm()
    assert r.exit_code == 3
    (s,) = [e for e in r.records if e["event"] == "session"]
    assert s["status"] == "skipped" and s["reason"].startswith("request rejected (HTTP 400)")
    assert memories(db_path) == [] and guard_state(db_path)["consecutive_failures"] == 0


@pytest.mark.parametrize("reply, message", [
    (Reply(status=429), "openai-chat failed with HTTP 429"),
    (Reply(status=500), "openai-chat failed with HTTP 500"),
    (Reply(delay=2.0, content=answer()), "openai-chat timed out"),
])
def test_provider_failure_stops_cleanly_and_the_next_run_resumes(llm, ingest, server, db_path,
                                                                 reply, message) -> None:
    ingest(S1)
    server.script = [reply]
    r = llm()
    assert r.exit_code == 75
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"hippo: {message}") and "try again later" in line
    assert r.records[-1]["event"] == "summary" and r.records[-1]["stopped"].startswith(message)
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None
    assert guard_state(db_path)["consecutive_failures"] == 1
    ok = llm()
    assert ok.exit_code == 0 and len(memories(db_path)) == 1
    assert guard_state(db_path)["consecutive_failures"] == 0


def test_breaker_opens_after_three_failures_and_another_process_sees_it(
        llm, ingest, server, db_path, hippo_proc) -> None:
    ingest(S1)
    server.script = [Reply(status=500)] * 3
    codes = [llm().exit_code for _ in range(3)]
    assert codes == [75, 75, 75] and len(server.requests) == 3
    state = guard_state(db_path)
    assert state["open"] and state["consecutive_failures"] == 3
    proc = hippo_proc(["--embedder", "hash", "extract"],
                      env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url})
    assert proc.returncode == 75
    assert "openai-chat circuit open" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert len(server.requests) == 3  # refused before any request
    assert memories(db_path) == []


def test_a_session_split_over_requests_is_stored_whole_or_not_at_all(
        llm, ingest, server, db_path, config) -> None:
    config("window_chars = 300\n")
    long = " ".join(["PostgreSQL stores the events, partitioned by month."] * 30)
    ingest(("alpha-1", [("user", long), ("user", long), ("user", DECISION)]))
    chunks = connect(db_path).scalar("SELECT count(*) FROM echo_chunks")
    assert chunks >= 3
    server.script = [Reply(answer({"type": "fact", "text": "Events are partitioned by month.",
                                   "importance": 0.5, "tags": [], "evidence": [1]})),
                     Reply(status=500)]
    r = llm()
    assert r.exit_code == 75 and len(server.requests) == 2
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None
    ok = llm()
    assert ok.exit_code == 0 and ok.records[-1]["llm_calls"] == chunks


def test_daily_cap_stops_the_provider_and_keeps_finished_sessions(llm, ingest, server, db_path,
                                                                  config) -> None:
    config('[guard.openai-chat]\ncalls_per_day = 1\n')
    ingest(S1, ("beta-2", [("user", "another session")]))
    r = llm()
    assert r.exit_code == 75
    assert r.stderr.strip() == ("hippo: openai-chat daily cap of 1 calls reached; raise "
                                "[guard.openai-chat] calls_per_day or wait until tomorrow (UTC)")
    assert len(server.requests) == 1 and len(memories(db_path)) == 1
    assert meta(db_path, "extract.last_chunk_id") == "1"


def test_daily_token_cap_refuses_before_the_request(llm, ingest, server, db_path,
                                                     config) -> None:
    config('[guard.openai-chat]\ntokens_per_day = 500\n')
    ingest(S1)
    r = llm()
    assert r.exit_code == 75 and "openai-chat daily cap of 500 tokens reached" in r.stderr
    assert server.requests == [] and memories(db_path) == []


def test_missing_api_key_is_exit_78(cli, ingest, config) -> None:
    ingest(S1)
    r = cli("extract")
    assert r.exit_code == 78 and r.stdout == ""
    assert r.stderr.splitlines() == [
        ("hippo: OPENAI_API_KEY is not set; export it (and OPENAI_BASE_URL for another server) "
         "or use --extractor rules")]
