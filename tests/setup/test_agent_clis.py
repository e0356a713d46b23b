"""`hippo setup` and the plugin against the real clients (npm's @anthropic-ai/claude-code,
@openai/codex, @google/gemini-cli), which run here without a login: `claude -p` fires its
hooks and then stops at "Not logged in".

The clients are found in HIPPO_TEST_AGENT_CLIS (a node_modules/.bin folder; `.ci/run`
installs them there), else on PATH; without them these tests skip and say why, unless
HIPPO_TEST_REQUIRE_AGENT_CLIS=1 (CI), where a missing client fails the run. Every hook and
server installed here names a temp store (`--db`), and HOME is a temp folder."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, Result
from tests.setup.conftest import put

Hippo = Callable[..., Result]

# Another hook the user has in the file hippo edits: kept, and run beside hippo's.
LOCAL_SETTINGS = b"""{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "echo '{}' >/dev/null"}]}
    ]
  }
}
"""


def client(name: str) -> str:
    folder = os.environ.get("HIPPO_TEST_AGENT_CLIS")
    found = shutil.which(name, path=folder) if folder else shutil.which(name)
    if found:
        return found
    why = (f"{name} not found in HIPPO_TEST_AGENT_CLIS={folder}" if folder else
           f"{name} not on PATH (npm install --prefix DIR @anthropic-ai/claude-code "
           "@openai/codex @google/gemini-cli; HIPPO_TEST_AGENT_CLIS=DIR/node_modules/.bin)")
    if os.environ.get("HIPPO_TEST_REQUIRE_AGENT_CLIS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def run(argv: list[str], cwd: Path, home: Path, timeout: float = 120
        ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CODEX_", "GEMINI_", "OPENAI_"))}
    env |= {"HOME": str(home), "HIPPO_EMBEDDER": "hash", "NO_COLOR": "1"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_claude_code_project_setup_runs_the_hooks_and_server_and_removes_cleanly(
        hippo: Hippo, home: Path, repo: Path, tmp_path: Path) -> None:
    claude = client("claude")
    local = put(repo / ".claude" / "settings.local.json", LOCAL_SETTINGS)
    assert hippo("add", "Deploys go through make ship, never by hand", "--type", "rule",
                 "--project", "proj", "--embedder", "hash").exit_code == 0
    r = hippo("setup", "claude-code", "--scope", "project")
    assert r.exit_code == 0, r.stderr

    log = tmp_path / "claude-debug.log"
    done = run([claude, "-p", "how do deploys work? make ship", "--debug-file", str(log)],
               repo, home)
    assert "Not logged in" in done.stdout + done.stderr
    text = log.read_text()
    assert "Successfully parsed and validated hook JSON output" in text
    for event, how in (("SessionStart", ("hook claude-code session-start) provided "
                        "additionalContext")),
                       ("UserPromptSubmit", ("hook claude-code prompt) provided "
                        "additionalContext"))):
        assert f"Hook {event} (" in text and how in text, event
    assert "hook claude-code session-end] completed with status 0" in text
    assert "Deploys go through make ship" in text  # hippo's context, as Claude read it

    listed = run([claude, "mcp", "list"], repo, home)
    line = next(x for x in listed.stdout.splitlines() if x.startswith("hippo:"))
    assert "Connected" in line and " mcp " in line + " "

    assert hippo("setup", "claude-code", "--scope", "project", "--remove").exit_code == 0
    assert local.read_bytes() == LOCAL_SETTINGS
    assert not (repo / ".mcp.json").exists()


def test_user_scope_claude_codex_and_gemini_list_hippo_after_setup(
        hippo: Hippo, home: Path, repo: Path, store: Path) -> None:
    claude, codex, gemini = client("claude"), client("codex"), client("gemini")
    for folder in (".claude", ".codex", ".gemini"):
        (home / folder).mkdir()
    for agent in ("claude-code", "codex", "gemini"):
        assert hippo("setup", agent).exit_code == 0
    listed = run([claude, "mcp", "list"], repo, home)  # the server in ~/.claude.json
    row = next(x for x in listed.stdout.splitlines() if x.startswith("hippo:"))
    assert f"--db {store} mcp" in row and "Connected" in row
    listed = run([codex, "mcp", "list"], repo, home)
    row = next(x for x in listed.stdout.splitlines() if x.startswith("hippo "))
    assert f"--db {store} mcp" in row and "enabled" in row
    listed = run([gemini, "mcp", "list"], repo, home)
    row = next(x for x in (listed.stdout + listed.stderr).splitlines() if "hippo:" in x)
    assert row.endswith(f"--db {store} mcp (stdio) - Disabled")  # an untrusted folder


def test_the_claude_code_plugin_installs_from_the_repository(home: Path, repo: Path) -> None:
    claude = client("claude")
    added = run([claude, "plugin", "marketplace", "add", str(REPO)], repo, home)
    assert added.returncode == 0, added.stderr
    installed = run([claude, "plugin", "install", "hippo@hippo"], repo, home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    details = run([claude, "plugin", "details", "hippo"], repo, home).stdout
    assert "Skills (1)  hippo-memory" in details
    assert "Hooks (3)  SessionStart, UserPromptSubmit, SessionEnd" in details
    assert "MCP servers (1)  hippo" in details


def test_codex_installs_the_same_plugin_with_its_mcp_server(home: Path, repo: Path) -> None:
    codex = client("codex")
    (home / ".codex").mkdir()
    added = run([codex, "plugin", "marketplace", "add", str(REPO)], repo, home)
    assert added.returncode == 0, added.stderr
    installed = run([codex, "plugin", "add", "hippo@hippo"], repo, home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    row = next(x for x in run([codex, "mcp", "list"], repo, home).stdout.splitlines()
               if x.startswith("hippo "))
    assert row.split()[:3] == ["hippo", "hippo", "mcp"] and "enabled" in row
