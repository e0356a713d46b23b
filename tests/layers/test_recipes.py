"""docs/agents.md stays true: its Claude Code and Codex settings run, and every command it
shows exists."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.layers.session_support import wait_finished

DOC = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, flags=re.DOTALL)


def settings(agent: str = "claude-code") -> dict:
    (block,) = [b for lang, b in BLOCKS if lang == "json" and '"hooks"' in b
                and f"hippo hook {agent} " in b]
    return json.loads(block)


def test_settings_shape() -> None:
    hooks = settings()["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60
                assert hook["command"].startswith("hippo hook claude-code ")


# Codex's hooks.json: `HooksFile` in codex-rs/config/src/hook_config.rs (its events and the
# fields of a command handler; `timeout` in seconds).
CODEX_EVENTS = {"PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
                "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
CODEX_HANDLER = {"type", "command", "timeout", "async", "statusMessage"}


def test_codex_hooks_file_and_toml_are_one_setup() -> None:
    import tomllib

    doc = settings("codex")
    assert set(doc) == {"hooks"}  # Codex refuses a hooks.json with other top-level keys
    hooks = doc["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
    assert set(hooks) <= CODEX_EVENTS
    for groups in hooks.values():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for hook in group["hooks"]:
                assert set(hook) <= CODEX_HANDLER and hook["type"] == "command"
                assert 0 < hook["timeout"] <= 60
                words = shlex.split(hook["command"])
                assert words[:3] == ["hippo", "hook", "codex"] and len(words) == 4
    (toml,) = [b for lang, b in BLOCKS if lang == "toml" and "[[hooks." in b]
    assert tomllib.loads(toml) == doc
    assert any(lang == "toml" and "codex_hooks = true" in b for lang, b in BLOCKS)


def test_codex_hooks_answer_the_contract(db_path: Path, tmp_path: Path, cli) -> None:
    """Each pasted Codex command, fed Codex's stdin for its event (codex-rs schema.rs)."""
    cli("add", "Never force-push to main", "-t", "rule", "-p", "api")
    cli("add", "Staging deploys run `make deploy-staging`", "-t", "procedure", "-p", "api")
    cwd = tmp_path / "api"
    (cwd / ".git").mkdir(parents=True)
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_bytes((REPO / "tests" / "ingest" / "fixtures" / "claude_features.jsonl")
                        .read_bytes())
    base = {"session_id": "019e1625-789d-76c0-80ab-3724b5ddb799",
            "transcript_path": str(rollout), "cwd": str(cwd), "model": "gpt-5-codex",
            "permission_mode": "default"}
    extra = {"SessionStart": {"source": "startup"},
             "UserPromptSubmit": {"turn_id": "t1", "prompt": "how do staging deploys work?"},
             "Stop": {"turn_id": "t1", "stop_hook_active": False,
                      "last_assistant_message": "Done."},
             "SessionEnd": {"reason": "other"}}
    for event, groups in settings("codex")["hooks"].items():
        (hook,) = groups[0]["hooks"]
        argv = [sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder", "hash",
                *shlex.split(hook["command"])[1:]]
        payload = {**base, "hook_event_name": event, **extra[event]}
        if event == "SessionEnd":
            payload = {k: payload[k] for k in ("session_id", "transcript_path", "cwd",
                                               "hook_event_name", "reason")}
        out = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True,
                             check=False, timeout=hook["timeout"] * 6)
        assert out.returncode == 0, out.stderr
        if event in ("Stop", "SessionEnd"):
            assert out.stdout == "" and "in the background" in out.stderr, out.stderr
            continue
        answer = json.loads(out.stdout)
        assert set(answer) == {"hookSpecificOutput"}
        assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
        assert answer["hookSpecificOutput"]["hookEventName"] == event
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert ("force-push" if event == "SessionStart" else "deploy-staging") in context
    wait_finished(db_path, 2)  # the Stop and SessionEnd jobs


def test_settings_commands_answer_the_contract(db_path: Path, tmp_path: Path, cli) -> None:
    cli("add", "Never force-push to main", "-t", "rule", "-p", "api")
    cli("add", "Staging deploys run `make deploy-staging`", "-t", "procedure", "-p", "api")
    cwd = tmp_path / "api"
    (cwd / ".git").mkdir(parents=True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes((REPO / "tests" / "ingest" / "fixtures" / "claude_features.jsonl")
                           .read_bytes())
    extra = {"SessionStart": {"source": "startup"},
             "UserPromptSubmit": {"prompt": "how do staging deploys work?"},
             "SessionEnd": {"reason": "prompt_input_exit"}}
    for event, groups in settings()["hooks"].items():
        (hook,) = groups[0]["hooks"]
        argv = [sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder", "hash",
                *shlex.split(hook["command"])[1:]]
        stdin = json.dumps({"session_id": "s1", "transcript_path": str(transcript),
                            "cwd": str(cwd), "permission_mode": "default",
                            "hook_event_name": event, **extra[event]})
        out = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False,
                             timeout=hook["timeout"] * 6)
        assert out.returncode == 0, out.stderr
        if event == "SessionEnd":
            assert out.stdout == "" and "in the background now" in out.stderr, out.stderr
            continue
        answer = json.loads(out.stdout)
        assert answer["hookSpecificOutput"]["hookEventName"] == event
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert ("force-push" if event == "SessionStart" else "deploy-staging") in context
    wait_finished(db_path, 1)  # the SessionEnd job


def test_every_command_shown_exists() -> None:
    from hippo.docgen import tree

    known = {c.path[0] for c in tree().subcommands}
    shown = set()
    for lang, block in BLOCKS:
        if lang in ("sh", "json", "markdown"):
            # A flag has a letter after its dashes: `claude mcp add hippo -- hippo mcp`
            # names the server hippo and then runs `hippo mcp`.
            shown |= set(re.findall(r"\bhippo (?:--?[a-z]\S* )*([a-z]+)\b", block))
    assert {"context", "guidance", "search", "hook"} <= shown <= known, shown - known
