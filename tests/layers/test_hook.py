"""`hippo hook claude-code`: fed the stdin JSON Claude Code sends, prints its context contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from hippo.layers import recall


def payload(cwd: Path, event: str, **extra: object) -> str:
    """What Claude Code writes to a command hook's stdin (hooks reference, common fields)."""
    return orjson.dumps({
        "session_id": "0f3c9a52-6d1e-4c55-9a57-2b1f9d0c1e77",
        "transcript_path": "/home/dev/.claude/projects/-home-dev-A/0f3c9a52.jsonl",
        "cwd": str(cwd), "permission_mode": "default", "hook_event_name": event, **extra,
    }).decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "A"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root / "src"  # a subdirectory: the project is the git root's name


def test_session_start(cli, rules_db: Path, repo: Path) -> None:
    r = cli("hook", "claude-code", input=payload(repo, "SessionStart", source="startup"))
    assert r.exit_code == 0, r.stderr
    (out,) = r.records
    assert out == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": cli("context", "--project", "A", "--agent", "claude-code").stdout}}
    assert out["hookSpecificOutput"]["additionalContext"].startswith("## Rules (project: A)\n")
    same = cli("hook", "claude-code", "session-start", "--plain",
               input=payload(repo, "SessionStart", source="compact"))
    assert same.stdout == out["hookSpecificOutput"]["additionalContext"]


def test_project_flag_beats_cwd(cli, rules_db: Path, repo: Path) -> None:
    r = cli("hook", "claude-code", "--project", "B", "--plain",
            input=payload(repo, "SessionStart", source="startup"))
    assert r.stdout.startswith("## Rules (project: B)\n")


def test_prompt(cli, repo: Path) -> None:
    facts = [{"text": "Staging deploys go through `make deploy-staging`", "type": "procedure",
              "project": "A"},
             {"text": "Staging deploys of project B use helm", "type": "fact", "project": "B"},
             {"text": "The office plant needs water on Mondays", "type": "fact", "project": "A"}]
    cli("add", "-", input="\n".join(orjson.dumps(f).decode() for f in facts))
    r = cli("hook", "claude-code", input=payload(
        repo, "UserPromptSubmit", prompt="How do staging deploys work here?"))
    assert r.exit_code == 0, r.stderr
    (out,) = r.records
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "make deploy-staging" in text and "helm" not in text
    if recall.has_pipeline():  # the same Markdown as `hippo search --format markdown`
        r = cli("search", "How do staging deploys work here?", "--format", "markdown", "-p", "A")
        assert r.stdout == text
    r = cli("hook", "claude-code", "prompt", input=payload(repo, "UserPromptSubmit", prompt="  "))
    assert r.exit_code == 0 and r.stdout == ""


def test_prompt_about_nothing_stored_adds_nothing(cli, repo: Path) -> None:
    """With the local model a prompt about nothing stored scores 0 in search (its match
    factor), so the hook adds no memory to it; a prompt about a stored memory gets it,
    and --min-score 0 gives back search's whole answer."""
    facts = ["Staging deploys go through `make deploy-staging`",
             "Never force-push to main; use --force-with-lease on feature branches",
             "CI fails with ERR_SSL_PROTOCOL_ERROR when HTTPS_PROXY is set"]
    for text in facts:
        assert cli("add", text, "-p", "A", embedder="local").exit_code == 0
    chat = payload(repo, "UserPromptSubmit", prompt="thanks, that was a great pizza")
    r = cli("hook", "claude-code", "--plain", input=chat, embedder="local")
    assert r.exit_code == 0 and r.stdout == "", r.stdout
    everything = cli("hook", "claude-code", "--plain", "--min-score", "0", input=chat,
                     embedder="local")
    assert everything.stdout.count("\n- ") == len(facts)
    r = cli("hook", "claude-code", "--plain", embedder="local", input=payload(
        repo, "UserPromptSubmit", prompt="can I force-push my branch?"))
    assert r.stdout.startswith("## Relevant memories\n- Never force-push to main"), r.stdout
    assert "pizza" not in r.stdout and "make deploy-staging" not in r.stdout


def test_prompt_lexical_fallback(cli, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall, "has_pipeline", lambda: False)
    cli("add", "Flaky test: tests/test_io.py::test_timeout needs --timeout=30", "-t", "fact",
        "-p", "A")
    r = cli("hook", "claude-code", "prompt", "--plain", input=payload(
        repo, "UserPromptSubmit", prompt='why does "tests/test_io.py" -k timeout fail? (E1234)'))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("## Relevant memories\n- Flaky test: tests/test_io.py")
    assert "lexical-only" in r.stderr


@pytest.mark.parametrize(("args", "stdin", "why"), [
    (["claude-code"], "not json", "stdin is not the hook's JSON"),
    (["claude-code"], "[1, 2]", "stdin is not a JSON object"),
    (["claude-code"], "{}", "no event given"),
    (["claude-code", "stop"], "{}", "unknown hook event 'stop'"),
    (["cursor", "prompt"], "{}", "unknown agent 'cursor'"),
])
def test_errors_never_break_the_agent(cli, args: list[str], stdin: str, why: str) -> None:
    r = cli("hook", *args, input=stdin)
    assert r.exit_code == 0 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("hippo hook: ") and why in line and line.endswith("(no context added)")


def test_database_error_in_a_real_process(hippo_proc, tmp_path: Path, repo: Path) -> None:
    from hippo.layers.hint import section

    missing = tmp_path / "missing" / "dir" / "h.db"  # nothing stored yet: the hint alone
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(missing), "hook",
                          "claude-code", "--plain"],
                         input=payload(repo, "SessionStart", source="startup"),
                         capture_output=True, text=True, check=False)
    assert (out.returncode, out.stdout, out.stderr) == (0, section(), "")
    assert not missing.parent.exists()
    bad = tmp_path / "notes.txt"  # not a database at all: one line, never the agent's failure
    bad.write_text("my notes\n")
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(bad), "hook", "claude-code"],
                         input=payload(repo, "SessionStart", source="startup"),
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout == ""
    assert out.stderr.startswith("hippo hook: ") and out.stderr.count("\n") == 1
    assert bad.read_text() == "my notes\n"
    ok = hippo_proc(["hook", "claude-code", "--plain"],
                    input=payload(repo, "SessionStart", source="resume"))
    assert ok.returncode == 0 and ok.stdout == section()  # empty database: no rules


@pytest.mark.parametrize("pipeline", [True, False], ids=["search", "lexical"])
def test_prompt_marks_a_machine_rule_no_person_reviewed(cli, repo: Path, pipeline: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule an agent or the extractor wrote reaches the prompt (search finds it), but not
    labelled as the user's own rules are: until a person verifies or pins it, it says so."""
    if not pipeline:
        monkeypatch.setattr(recall, "has_pipeline", lambda: False)
    rules = [{"text": "Deploy the staging cluster with make deploy-staging", "type": "rule",
              "project": "A"},
             {"text": "Deploy the staging cluster only on weekdays", "type": "rule",
              "project": "A", "author": "machine"},
             {"text": "Deploy the staging cluster after the smoke tests pass", "type": "rule",
              "project": "A", "author": "machine"}]
    assert cli("add", "-", input="\n".join(orjson.dumps(r).decode() for r in rules)
               ).exit_code == 0
    assert cli("verify", "3").exit_code == 0
    r = cli("hook", "claude-code", "prompt", "--plain", "--min-score", "0", input=payload(
        repo, "UserPromptSubmit", prompt="how do I deploy the staging cluster?"))
    assert r.exit_code == 0, r.stderr
    lines = {line.split(" (")[0][2:]: line.split(" (", 1)[1] for line in r.stdout.splitlines()
             if line.startswith("- ")}
    assert lines[rules[0]["text"]].startswith("rule, A, ")
    assert lines[rules[1]["text"]].startswith("rule, machine-written, unverified, A, ")
    assert lines[rules[2]["text"]].startswith("rule, A, ")  # a person verified it
