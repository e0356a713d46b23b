"""docs/agents.md stays true: its Claude Code settings run, and every command it shows exists."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

DOC = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, flags=re.DOTALL)


def settings() -> dict:
    (block,) = [b for lang, b in BLOCKS if lang == "json" and '"hooks"' in b]
    return json.loads(block)


def test_settings_shape() -> None:
    hooks = settings()["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit"}
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60
                assert hook["command"].startswith("hippo hook claude-code ")


def test_settings_commands_answer_the_contract(db_path: Path, tmp_path: Path, cli) -> None:
    cli("add", "Never force-push to main", "-t", "rule", "-p", "api")
    cli("add", "Staging deploys run `make deploy-staging`", "-t", "procedure", "-p", "api")
    cwd = tmp_path / "api"
    (cwd / ".git").mkdir(parents=True)
    extra = {"SessionStart": {"source": "startup"},
             "UserPromptSubmit": {"prompt": "how do staging deploys work?"}}
    for event, groups in settings()["hooks"].items():
        (hook,) = groups[0]["hooks"]
        argv = [sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder", "hash",
                *shlex.split(hook["command"])[1:]]
        stdin = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"),
                            "cwd": str(cwd), "permission_mode": "default",
                            "hook_event_name": event, **extra[event]})
        out = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False,
                             timeout=hook["timeout"] * 6)
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        assert answer["hookSpecificOutput"]["hookEventName"] == event
        context = answer["hookSpecificOutput"]["additionalContext"]
        assert ("force-push" if event == "SessionStart" else "deploy-staging") in context


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
