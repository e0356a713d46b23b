"""`hippo extract --extractor agent`: the user's agent CLI, headless, writes the summary.

A stand-in executable speaks Claude Code's `claude -p --output-format json` result (one
JSON object: `type`, `subtype`, `is_error`, `result`, `session_id`, `total_cost_usd`,
`usage`), and the real `claude` binary, when installed, fails as it does without a login.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import orjson
import pytest

from hippo.extract.agent import answer_of, cited, prompt, uncovered
from hippo.extract.base import EchoChunk, SessionChunks
from tests.extract.conftest import memories, meta

SECRET = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
TURNS = [("user", "the cache keeps dropping connections, can you look?"),
         ("assistant", "The Redis client resets idle sockets."),
         ("user", "ok, set a health check then"),
         ("assistant", "Done: health_check_interval=30 in src/cache.py.")]

STAND_IN = '''\
import json, pathlib, re, sys
prompt = sys.stdin.read()
here = pathlib.Path(__file__)
here.with_suffix(".prompts").open("a").write(prompt + "\\n=====\\n")
mode = here.with_suffix(".mode").read_text().strip() if here.with_suffix(".mode").exists() \\
    else "ok"
if mode == "logged-out":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                      "result": "Not logged in \\u00b7 Please run /login",
                      "session_id": "s", "total_cost_usd": 0, "usage": {}}))
    sys.exit(1)
ids = re.findall(r"\\[chunk (\\d+)\\]", prompt)
first, last = ids[0], ids[-1]
summary = f"""<analysis>
Looked at the cache.
</analysis>
<summary>
1. Primary Request and Intent:
   The user wanted the dropped cache connections fixed.
2. Key Technical Concepts:
   - The cache layer uses Redis 7 with a 300 s TTL [chunk {first}]
   - The CI token {SECRET} is kept in `.env.ci` [chunk {last}]
3. Files and Code Sections:
   - `src/cache.py` holds the Redis client and its retry policy [chunk {last}]
4. Errors and fixes:
   - `ConnectionResetError` on idle sockets: fixed by setting `health_check_interval=30` \\
[chunk {first}, {last}]
6. Pending Tasks:
   - Add a cache hit-rate panel to the Grafana board [chunk {last}]
</summary>"""
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                  "result": summary, "session_id": "s", "total_cost_usd": 0.01,
                  "usage": {"input_tokens": 1200, "output_tokens": 300}}))
'''.replace("{SECRET}", SECRET)


@pytest.fixture
def stand_in(tmp_path: Path, isolated_home: Path) -> Path:
    """The stand-in CLI, configured as `[extract] agent_command` (extractor `agent`)."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{STAND_IN}")
    script.chmod(0o755)
    command = f"{script} -p --output-format json"
    (isolated_home / "config.toml").write_text(
        f'[extract]\nextractor = "agent"\nagent_command = {orjson.dumps(command).decode()}\n')
    return script


def test_the_summary_of_what_no_compaction_covers_becomes_memories(cli, ingest, stand_in,
                                                                    db_path: Path) -> None:
    ingest(("alpha-1", TURNS))
    r = cli("extract", "--json")
    assert r.exit_code == 0, r.stderr
    *_, summary = r.records
    assert summary["extractor"] == "agent" and summary["llm_calls"] == 1
    mems = memories(db_path)
    texts = {m["text"]: m for m in mems}
    fix = texts["`ConnectionResetError` on idle sockets: fixed by setting "
                "`health_check_interval=30`"]
    assert fix["type"] == "insight" and fix["author"] == "machine"
    assert fix["source"]["extractor"] == "agent" and fix["source"]["session"] == "alpha-1"
    assert fix["source"]["file"].endswith("alpha-1.jsonl") and fix["source"]["lines"]
    where = texts["`src/cache.py` holds the Redis client and its retry policy"]
    assert where["type"] == "fact"
    task = texts["Add a cache hit-rate panel to the Grafana board"]
    assert task["type"] == "task" and "pending" in task["tags"]
    assert not any(SECRET in m["text"] for m in mems)  # the answer is masked
    (token,) = [m["text"] for m in mems if ".env.ci" in m["text"]]
    assert "ghp_" not in token, token
    prompts = stand_in.with_suffix(".prompts").read_text()
    assert "Errors and fixes" in prompts and "[chunk 1]" in prompts
    # A re-run has nothing new to read: no call, nothing added.
    again = cli("extract", "--json")
    assert again.records[-1]["sessions"] == 0 and again.records[-1]["llm_calls"] == 0
    # Audited: the run's memories go with `hippo undo RUN`.
    undo = cli("undo", summary["run_id"])
    assert undo.exit_code == 0, undo.stderr
    assert memories(db_path) == []


def test_without_a_command_it_refuses_naming_the_setting(cli, ingest,
                                                         isolated_home: Path) -> None:
    ingest(("alpha-1", TURNS))
    r = cli("extract", "--extractor", "agent")
    assert (r.exit_code, r.stdout) == (78, "")
    assert r.stderr.count("\n") == 1 and "[extract] agent_command" in r.stderr
    assert r.stderr.startswith("hippo: --extractor agent needs [extract] agent_command in "
                               f"{isolated_home / 'config.toml'}")


def test_a_cli_that_fails_stores_nothing_and_the_session_is_tried_again(
        cli, ingest, stand_in: Path, db_path: Path) -> None:
    ingest(("alpha-1", TURNS))
    stand_in.with_suffix(".mode").write_text("logged-out")
    r = cli("extract")
    assert (r.exit_code, r.stderr.count("\n")) == (75, 1), r.stderr
    assert "agent command claude failed (exit 1): Not logged in" in r.stderr
    assert "tried again on the next run" in r.stderr
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None
    stand_in.with_suffix(".mode").write_text("ok")
    assert cli("extract").exit_code == 0
    assert len(memories(db_path)) >= 4 and meta(db_path, "extract.last_chunk_id") == "1"


def _real_claude() -> str | None:
    folder = os.environ.get("HIPPO_TEST_AGENT_CLIS")
    if folder and (Path(folder) / "claude").exists():
        return str(Path(folder) / "claude")
    return shutil.which("claude")


def test_the_real_claude_without_a_login_fails_in_one_line(
        cli, ingest, tmp_path: Path, isolated_home: Path, db_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    claude = _real_claude()
    if claude is None:
        pytest.skip("no claude CLI: set HIPPO_TEST_AGENT_CLIS to a node_modules/.bin holding "
                    "it (npm install @anthropic-ai/claude-code)")
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no login, no settings of the developer's
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    command = f"{claude} -p --output-format json --no-session-persistence"
    (isolated_home / "config.toml").write_text(
        f"[extract]\nagent_command = {orjson.dumps(command).decode()}\n")
    ingest(("alpha-1", TURNS))
    r = cli("extract", "--extractor", "agent")
    assert (r.exit_code, r.stderr.count("\n")) == (75, 1), r.stderr
    assert "agent command claude failed (exit 1): Not logged in" in r.stderr
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None


def test_what_is_asked_and_read() -> None:
    chunks = [EchoChunk(i, i, "/t.jsonl", (role,), i, i, (), None, text)
              for i, role, text in ((1, "user", "old"), (2, "summary", "Summary:\n- x"),
                                    (3, "user", f"my token is {SECRET}"), (4, "assistant", "ok"))]
    assert [c.id for c in uncovered(chunks)] == [3, 4]
    assert [c.id for c in uncovered(chunks[2:])] == [3, 4]
    asked = prompt(SessionChunks(1, "s", "alpha", "claude-code", None, chunks), chunks[2:])
    assert SECRET not in asked and "[chunk 3]" in asked and "[chunk 1]" not in asked
    assert answer_of('{"type": "result", "is_error": false, "result": "hi", '
                     '"usage": {"input_tokens": 3, "output_tokens": 2}}') == ("hi", None, 5)
    assert answer_of('{"response": "hey", "stats": {}}') == ("hey", None, 0)
    assert answer_of('{"is_error": true, "result": "Not logged in"}')[1] == "Not logged in"
    codex = "\n".join(orjson.dumps(e).decode() for e in (
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "- a"}}))
    assert answer_of(codex) == ("- a", None, 0)
    assert answer_of("plain words") == ("plain words", None, 0)
    text, lines = cited("- one [chunk 3]\n- two [chunks 3, 4]\n- three")
    assert text == "- one\n- two\n- three"
    assert [ids for _, ids in lines] == [[3], [3, 4], []]


def test_the_session_end_job_records_the_failure_in_one_line(hippo_proc, stand_in: Path,
                                                             db_path: Path,
                                                             tmp_path: Path) -> None:
    """Run where it is meant to run: the detached job of a session-end hook. The CLI
    fails: the job's record says so in one line, no memory is written, and the session's
    chunks wait past the watermark for the next run."""
    from tests.layers.session_support import CLAUDE_A, copy, jobs, wait_finished
    from tests.layers.test_session_end import session_end

    stand_in.with_suffix(".mode").write_text("logged-out")
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, tmp_path))
    assert r.returncode == 0 and r.stdout == ""
    wait_finished(db_path, 1)
    (failure,) = jobs(db_path)["failures"]
    assert failure["outcome"] == "failed" and failure["step"] == "extract"
    assert failure["error"].startswith("agent command claude failed (exit 1): Not logged in")
    assert "\n" not in failure["error"]
    assert memories(db_path) == [] and meta(db_path, "extract.last_chunk_id") is None
    stand_in.with_suffix(".mode").write_text("ok")
    again = hippo_proc(["--embedder", "hash", "extract", "--json"])
    assert again.returncode == 0, again.stderr
    assert orjson.loads(again.stdout.splitlines()[-1])["added"] > 0
