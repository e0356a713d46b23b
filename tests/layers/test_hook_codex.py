"""`hippo hook codex ...`: the real hook process fed the stdin JSON Codex CLI sends.

The payloads follow codex-rs/hooks/src/schema.rs (SessionStartCommandInput,
UserPromptSubmitCommandInput, StopCommandInput; SessionEnd from its generated
session-end.command.input schema): every field Codex writes, no other. Codex parses a
hook's stdout with `deny_unknown_fields`: the answer may hold `hookSpecificOutput` with
`hookEventName` and `additionalContext` only, and a Stop hook must print nothing (or
valid Stop JSON) and exit 0 (exit 2 would make the agent continue).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from hippo.maintain import session_job
from tests.layers.session_support import CODEX, CODEX_ID, copy, end_queued, jobs, wait_finished

SESSION = "019e1625-789d-76c0-80ab-3724b5ddb799"


def codex(event: str, cwd: Path, **fields: object) -> str:
    common: dict[str, object] = {"session_id": SESSION, "transcript_path": None,
                                 "cwd": str(cwd), "hook_event_name": event}
    if event != "SessionEnd":
        common |= {"model": "gpt-5-codex", "permission_mode": "default"}
    if event in ("UserPromptSubmit", "Stop"):
        common["turn_id"] = "019e1626-0b4f-7a31-9c1e-5f0d7c2a9b11"
    if event == "Stop":
        common |= {"stop_hook_active": False, "last_assistant_message": "Done."}
    return orjson.dumps({**common, **fields}).decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "A"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture(autouse=True)
def _no_stray_jobs():
    yield
    end_queued()


def test_session_start_answers_what_codex_reads(hippo_proc, rules_db: Path, repo: Path,
                                                cli) -> None:
    for args in (["hook", "codex", "session-start"], ["hook", "codex"]):
        r = hippo_proc(args, input=codex("SessionStart", repo, source="startup"))
        assert r.returncode == 0, r.stderr
        out = orjson.loads(r.stdout)
        assert out == {"hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": cli("context", "--project", "A", "--agent", "codex").stdout}}
        assert out["hookSpecificOutput"]["additionalContext"].startswith("## Rules (project: A)")


def test_prompt_answers_with_memories(hippo_proc, cli, repo: Path) -> None:
    cli("add", "Staging deploys go through `make deploy-staging`", "-t", "procedure", "-p", "A")
    cli("add", "Staging deploys of project B use helm", "-t", "fact", "-p", "B")
    r = hippo_proc(["--embedder", "hash", "hook", "codex", "prompt"],
                   input=codex("UserPromptSubmit", repo, prompt="How do staging deploys work?"))
    assert r.returncode == 0, r.stderr
    (key,) = orjson.loads(r.stdout)
    hso = orjson.loads(r.stdout)[key]
    assert key == "hookSpecificOutput" and set(hso) == {"hookEventName", "additionalContext"}
    assert hso["hookEventName"] == "UserPromptSubmit"
    assert "make deploy-staging" in hso["additionalContext"] and "helm" not in hso[
        "additionalContext"]


def test_stop_learns_the_rollout_at_most_once_per_interval(hippo_proc, db_path: Path,
                                                           tmp_path: Path, repo: Path) -> None:
    rollout = copy(CODEX, tmp_path / "rollout.jsonl")
    stop = codex("Stop", repo, transcript_path=str(rollout))
    r = hippo_proc(["--embedder", "hash", "hook", "codex", "stop"], input=stop)
    assert r.returncode == 0 and r.stdout == ""  # Codex: empty stdout, exit 0 = go on
    assert "in the background now" in r.stderr
    state = wait_finished(db_path, 1)
    assert state["last"]["outcome"] == "ok" and state["last"]["event"] == "stop"
    assert state["last"]["ingest"]["chunks"] > 10
    # The next turns within stop_ingest_minutes (default 10): one job is queued for the
    # interval's end, the Stops after it add nothing.
    r = hippo_proc(["--embedder", "hash", "hook", "codex", "stop"], input=stop)
    assert r.returncode == 0 and r.stdout == "" and "in the background at " in r.stderr
    for _ in range(2):
        r = hippo_proc(["--embedder", "hash", "hook", "codex", "stop"], input=stop)
        assert r.returncode == 0 and r.stdout == ""
        assert "is already queued for" in r.stderr and "nothing more to do" in r.stderr
    status = json.loads((session_job.home() / session_job.STATUS).read_text())
    queued = [j for j in status["jobs"] if j["outcome"] == "queued"]
    (job,) = queued
    first = next(j for j in status["jobs"] if j["outcome"] == "ok")
    (starts,) = status["throttle"].values()  # when the queued job may start: 10 min after
    queued_at = datetime.fromisoformat(first["queued_at"]).timestamp()
    assert abs(starts - 600 - queued_at) < 5
    assert job["not_before"] == datetime.fromtimestamp(starts, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    summary = jobs(db_path)
    assert summary["queued"] == 1 and summary["jobs"] == 2


def test_stop_without_throttle_and_with_a_null_transcript_path(
        hippo_proc, db_path: Path, tmp_path: Path, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex may send `transcript_path: null`: the rollout is found under $CODEX_HOME."""
    home = tmp_path / "codex-home"
    copy(CODEX, home / "sessions" / "2026" / "05" / "11" /
         f"rollout-2026-05-11T11-26-55-{CODEX_ID}.jsonl")
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("HIPPO_STOP_INGEST_MINUTES", "0")
    for n in (1, 2):
        r = hippo_proc(["--embedder", "hash", "hook", "codex", "stop"],
                       input=codex("Stop", repo))
        assert r.returncode == 0 and r.stdout == "" and "background now" in r.stderr
        state = wait_finished(db_path, n)
    assert state["last"]["outcome"] == "ok" and state["last"]["ingest"]["chunks"] == 0
    assert state["last"]["path"].endswith(f"{CODEX_ID}.jsonl")
    r = hippo_proc(["--embedder", "hash", "hook", "codex", "stop"],
                   input=codex("Stop", repo, session_id="no-such-session"))
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == (f"hippo hook: no transcript_path on stdin and no rollout of session "
                        f"no-such-session under {home / 'sessions'} (nothing learned)\n")


def test_session_end_of_newer_codex(hippo_proc, db_path: Path, tmp_path: Path,
                                    repo: Path) -> None:
    rollout = copy(CODEX, tmp_path / "rollout.jsonl")
    r = hippo_proc(["--embedder", "hash", "hook", "codex"],
                   input=codex("SessionEnd", repo, transcript_path=str(rollout),
                               reason="other"))
    assert r.returncode == 0 and r.stdout == ""
    state = wait_finished(db_path, 1)
    assert state["last"]["event"] == "session-end" and state["last"]["outcome"] == "ok"
    r = hippo_proc(["stats", "--json", "--no-layers"])
    assert orjson.loads(r.stdout)["echo"]["chunks"] == state["last"]["ingest"]["chunks"]


@pytest.mark.parametrize(("args", "stdin", "why"), [
    (["codex"], "not json", "stdin is not the hook's JSON (no context added)"),
    (["codex", "pre-tool-use"], "{}",
     ("unknown hook event 'pre-tool-use' for codex; known: session-start, prompt, stop, "
     "session-end (no context added)")),
    (["codex"], '{"hook_event_name": "PostToolUse"}', "unknown hook event 'PostToolUse'"),
    (["claude-code", "stop"], "{}", "unknown hook event 'stop' for claude-code"),
    (["codex", "stop"], "{}", "no session_id on stdin (nothing learned)"),
    (["codex", "stop"], "[]", "stdin is not a JSON object (nothing learned)"),
])
def test_errors_never_break_codex(hippo_proc, args: list[str], stdin: str, why: str) -> None:
    r = hippo_proc(["hook", *args], input=stdin)
    assert r.returncode == 0 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("hippo hook: ") and why in line
