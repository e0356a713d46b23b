"""The agent is told when to write a memory: one text (`hippo.layers.hint`), at session
start (the hook, `hippo context --agent`) and in the MCP `remember` tool's description
(tests/mcp/test_remember_hint.py); `[agents] remember_hint = false` turns it off."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.embed import tokens
from hippo.layers.hint import HEADING, MAX_TOKENS, REMEMBER_HINT, section
from tests.layers.test_hook import payload


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "A"
    (root / ".git").mkdir(parents=True)
    return root


def test_the_hint_says_when_to_remember_within_80_tokens() -> None:
    assert tokens.count(section()) <= MAX_TOKENS == 80
    for said in ("a decision and its reason", "a non-obvious error and its fix",
                 "a convention or preference the person stated", "where something lives",
                 "what was left to do", "One self-contained statement per call",
                 "`supersede`"):
        assert said in REMEMBER_HINT


def test_session_start_ends_with_the_hint_and_context_for_an_agent_is_the_same(
        cli, rules_db: Path, repo: Path) -> None:
    r = cli("hook", "claude-code", "session-start", "--plain",
            input=payload(repo, "SessionStart", source="startup"))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("## Rules (project: A)\n")
    assert r.stdout.endswith("\n" + section())
    assert "remember hint (78 tokens)" in r.stderr
    same = cli("context", "--project", "A", "--agent", "claude-code")
    assert same.stdout == r.stdout
    plain = cli("context", "--project", "A")
    assert HEADING not in plain.stdout and r.stdout.startswith(plain.stdout)
    assert HEADING not in cli("context", "--project", "A", "--agent", "codex",
                              "--json").stdout


def test_remember_hint_false_turns_it_off(cli, rules_db: Path, repo: Path,
                                          isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("[agents]\nremember_hint = false\n")
    r = cli("hook", "claude-code", "session-start", "--plain",
            input=payload(repo, "SessionStart", source="startup"))
    assert r.exit_code == 0 and r.stdout.startswith("## Rules")
    assert HEADING not in r.stdout
    assert HEADING not in cli("context", "--project", "A", "--agent", "codex").stdout


def test_a_bad_value_is_exit_78_naming_the_setting(cli, rules_db: Path,
                                                   isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text('[agents]\nremember_hint = "yes"\n')
    r = cli("context", "--agent", "codex")
    assert (r.exit_code, r.stdout) == (78, "")
    assert r.stderr == "hippo: [agents] remember_hint must be true or false, got 'yes'\n"


def test_before_anything_is_stored_the_hint_comes_alone(cli, tmp_path: Path,
                                                        repo: Path) -> None:
    r = cli("hook", "claude-code", "session-start", db=tmp_path / "none.db",
            input=payload(repo, "SessionStart", source="startup"))
    assert r.exit_code == 0, r.stderr
    (out,) = r.records
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": section()}}
    prompt = cli("hook", "claude-code", "prompt", db=tmp_path / "none.db",
                 input=payload(repo, "UserPromptSubmit", prompt="hello"))
    assert (prompt.exit_code, prompt.stdout) == (0, "")
