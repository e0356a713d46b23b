"""Fixtures of the setup tests: a temp HOME with configs shaped like real ones, a temp git
repository as the current directory, and `hippo setup` run in-process against a temp
store (so whatever a hook or server installed here runs, it never touches a real one)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

# Shaped like the files the clients write, with the kinds of entries users have.
CLAUDE_SETTINGS = b"""{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
    "deny": ["Read(./.env)"]
  },
  "env": {"DISABLE_TELEMETRY": "1"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/.claude/hooks/check-bash.sh"}]}
    ],
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo welcome"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}
}
"""
CLAUDE_STATE = b"""{
  "numStartups": 42,
  "installMethod": "npm-global",
  "theme": "dark",
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  },
  "projects": {
    "/home/dev/api": {"allowedTools": [], "hasTrustDialogAccepted": true}
  }
}
"""
CODEX_CONFIG = b"""# Codex settings (see https://developers.openai.com/codex/config-reference)
model = "gpt-5-codex"
approval_policy = "on-request"   # ask before running anything outside the sandbox

[profiles.fast]
model = "gpt-5-mini"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

# a notification when a turn ends
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "notify-send 'codex done'"
"""
GEMINI_SETTINGS = b"""{
  "general": {"preferredEditor": "vim"},
  "ui": {"theme": "GitHub"},
  "mcpServers": {
    "context7": {"httpUrl": "https://mcp.context7.com/mcp", "timeout": 10000}
  }
}
"""
CURSOR_MCP = b"""{
  "mcpServers": {
    "sentry": {"url": "https://mcp.sentry.dev/mcp"}
  }
}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp HOME; no client's own location variable leaks in."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp git repository, the current directory."""
    folder = tmp_path / "proj"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    (tmp_path / "store").mkdir()
    return tmp_path / "store" / "hippo.db"


@pytest.fixture
def hippo(store: Path, cli: Callable[..., Result]) -> Callable[..., Result]:
    """`hippo --db STORE ARGS...` through the real entry point, in-process (the shared
    `cli` fixture, with the default embedder)."""
    return lambda *args: cli(*args, db=store, embedder=None)


def put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
