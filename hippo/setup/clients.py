"""The four clients `hippo setup` knows: where each keeps its config for a scope, and what
hippo puts there (hooks where the client runs them and hippo answers them, the MCP
server everywhere). The commands name hippo by the absolute path of the running install,
so they work from any shell or virtualenv."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCOPES = ("user", "project")
SERVER = "hippo"  # the MCP server's name in every client
# Codex passes an MCP server only a whitelist of the environment; hippo's own settings.
CODEX_ENV = ["HIPPO_HOME", "HIPPO_DB", "HIPPO_CONFIG"]


@dataclass(frozen=True, slots=True)
class Target:
    """One config file and hippo's entries in it."""

    path: Path
    fmt: str  # "json" or "toml"
    hooks: dict[str, dict[str, Any]] = field(default_factory=dict)  # event -> its group
    server: tuple[tuple[str, ...], dict[str, Any]] | None = None  # (where, spec)
    member: tuple[str, str] | None = None  # (list key, value): an approval by name


def hippo_argv(db: str | None = None) -> list[str]:
    """How a client starts this hippo: the running console script, else the one beside
    this Python, else `hippo` on PATH, else `python -m hippo`; with `--db` when given."""
    argv0 = Path(sys.argv[0])
    sibling = Path(sys.executable).parent / "hippo"
    if argv0.name == "hippo" and argv0.is_file() and os.access(argv0, os.X_OK):
        found = [os.path.abspath(argv0)]
    elif sibling.is_file() and os.access(sibling, os.X_OK):
        found = [os.path.abspath(sibling)]
    elif shutil.which("hippo"):
        found = [os.path.abspath(str(shutil.which("hippo")))]
    else:
        found = [os.path.abspath(sys.executable), "-m", "hippo"]
    if db is not None:
        found += ["--db", db if "://" in db else os.path.abspath(db)]
    return found


def _group(hippo: list[str], agent: str, event: str, timeout: int,
           matcher: str | None = None) -> dict[str, Any]:
    handler = {"type": "command", "command": shlex.join([*hippo, "hook", agent, event]),
               "timeout": timeout}
    return ({"matcher": matcher} if matcher else {}) | {"hooks": [handler]}


START = "startup|resume|clear|compact"


class Client:
    name = ""
    binaries: tuple[str, ...] = ()
    hooked = False  # hippo answers this client's hooks (`hippo hook NAME ...`)

    def user_dir(self) -> Path:
        raise NotImplementedError

    def installed(self) -> str | None:
        return next((p for b in self.binaries if (p := shutil.which(b))), None)

    def targets(self, scope: str, root: Path, hippo: list[str]) -> list[Target]:
        raise NotImplementedError

    def server_spec(self, hippo: list[str]) -> dict[str, Any]:
        return {"command": hippo[0], "args": [*hippo[1:], "mcp"]}


class ClaudeCode(Client):
    name, binaries, hooked = "claude-code", ("claude",), True

    def user_dir(self) -> Path:
        return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")

    def hooks(self, hippo: list[str]) -> dict[str, dict[str, Any]]:
        return {"SessionStart": _group(hippo, self.name, "session-start", 10, START),
                "UserPromptSubmit": _group(hippo, self.name, "prompt", 15),
                "SessionEnd": _group(hippo, self.name, "session-end", 10)}

    def targets(self, scope: str, root: Path, hippo: list[str]) -> list[Target]:
        if scope == "user":
            # User-scope MCP servers live in ~/.claude.json (beside ~/.claude, or in
            # CLAUDE_CONFIG_DIR when that is set), as `claude mcp add --scope user` puts them.
            state = (Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get(
                "CLAUDE_CONFIG_DIR") else Path.home()) / ".claude.json"
            return [Target(self.user_dir() / "settings.json", "json", self.hooks(hippo)),
                    Target(state, "json", server=(("mcpServers",), {
                        "type": "stdio", **self.server_spec(hippo), "env": {}}))]
        # The hooks name this machine's hippo: the personal settings file, not the shared
        # one; .mcp.json's server starts only once approved, which that file does by name.
        return [Target(root / ".claude" / "settings.local.json", "json", self.hooks(hippo),
                       member=("enabledMcpjsonServers", SERVER)),
                Target(root / ".mcp.json", "json",
                       server=(("mcpServers",), self.server_spec(hippo)))]


class Codex(Client):
    name, binaries, hooked = "codex", ("codex",), True

    def user_dir(self) -> Path:
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")

    def hooks(self, hippo: list[str]) -> dict[str, dict[str, Any]]:
        return {"SessionStart": _group(hippo, self.name, "session-start", 10, START),
                "UserPromptSubmit": _group(hippo, self.name, "prompt", 15),
                "Stop": _group(hippo, self.name, "stop", 10),
                "SessionEnd": _group(hippo, self.name, "session-end", 10)}

    def targets(self, scope: str, root: Path, hippo: list[str]) -> list[Target]:
        folder = self.user_dir() if scope == "user" else root / ".codex"
        spec = self.server_spec(hippo) | {"startup_timeout_sec": 30, "env_vars": CODEX_ENV}
        server = (("mcp_servers",), spec)
        # Codex warns when one config layer has hooks both in hooks.json and inline: the
        # hooks go where that layer keeps its hooks already.
        if (folder / "hooks.json").is_file():
            return [Target(folder / "config.toml", "toml", server=server),
                    Target(folder / "hooks.json", "json", self.hooks(hippo))]
        return [Target(folder / "config.toml", "toml", self.hooks(hippo), server=server)]


class Gemini(Client):
    name, binaries = "gemini", ("gemini",)

    def user_dir(self) -> Path:
        return Path.home() / ".gemini"

    def targets(self, scope: str, root: Path, hippo: list[str]) -> list[Target]:
        folder = self.user_dir() if scope == "user" else root / ".gemini"
        # `timeout` is per request, in milliseconds; the first search loads the model.
        spec = self.server_spec(hippo) | {"timeout": 30000}
        return [Target(folder / "settings.json", "json", server=(("mcpServers",), spec))]


class Cursor(Client):
    name, binaries = "cursor", ("cursor", "cursor-agent")

    def user_dir(self) -> Path:
        return Path.home() / ".cursor"

    def targets(self, scope: str, root: Path, hippo: list[str]) -> list[Target]:
        folder = self.user_dir() if scope == "user" else root / ".cursor"
        return [Target(folder / "mcp.json", "json",
                       server=(("mcpServers",), self.server_spec(hippo)))]


CLIENTS: dict[str, Client] = {c.name: c for c in (ClaudeCode(), Codex(), Gemini(), Cursor())}
