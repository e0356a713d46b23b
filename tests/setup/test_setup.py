"""`hippo setup AGENT`: merged into configs that hold other hooks, servers and settings,
idempotent, `--remove` back to the very bytes, bad input refused with the file untouched."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import tomlkit

from tests.conftest import Result
from tests.setup.conftest import (
    CLAUDE_SETTINGS,
    CLAUDE_STATE,
    CODEX_CONFIG,
    CURSOR_MCP,
    GEMINI_SETTINGS,
    put,
)

Hippo = Callable[..., Result]


def _hippo_hooks(doc: dict) -> dict[str, list[str]]:
    return {event: [h["command"] for g in groups for h in g["hooks"]
                    if " hook " in h["command"] and "hippo" in h["command"]]
            for event, groups in doc.get("hooks", {}).items()}


def _without_hippo(doc: dict) -> dict:
    """`doc` with hippo's hook groups taken out by hand (what setup must have added)."""
    out = json.loads(json.dumps(doc))
    for event in list(out.get("hooks", {})):
        out["hooks"][event] = [g for g in out["hooks"][event]
                               if not any("hippo" in h["command"] for h in g["hooks"])]
        if not out["hooks"][event]:
            del out["hooks"][event]
    return out


def test_claude_code_user_keeps_everything_else_and_remove_gives_the_bytes_back(
        hippo: Hippo, home: Path, store: Path) -> None:
    settings = put(home / ".claude" / "settings.json", CLAUDE_SETTINGS)
    state = put(home / ".claude.json", CLAUDE_STATE)
    os.chmod(state, 0o600)
    r = hippo("setup", "claude-code", "--json")
    assert r.exit_code == 0, r.stderr
    assert [(x["file"], x["action"]) for x in r.records] == [
        (str(settings), "written"), (str(state), "written")]
    assert all(Path(x["backup"]).read_bytes() in (CLAUDE_SETTINGS, CLAUDE_STATE)
               for x in r.records)

    doc = json.loads(settings.read_bytes())
    assert _without_hippo(doc) == json.loads(CLAUDE_SETTINGS)  # the user's, all kept
    hooks = _hippo_hooks(doc)
    exe = hooks["SessionStart"][0].split()[0]
    assert os.path.isabs(exe) and os.access(exe, os.X_OK)
    assert hooks == {"PreToolUse": [], "SessionStart": [
        f"{exe} --db {store} hook claude-code session-start"],
        "UserPromptSubmit": [f"{exe} --db {store} hook claude-code prompt"],
        "SessionEnd": [f"{exe} --db {store} hook claude-code session-end"]}
    assert doc["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "echo welcome"
    servers = json.loads(state.read_bytes())["mcpServers"]
    assert servers["github"] == json.loads(CLAUDE_STATE)["mcpServers"]["github"]
    assert servers["hippo"] == {"type": "stdio", "command": exe,
                                "args": ["--db", str(store), "mcp"], "env": {}}
    assert stat.S_IMODE(state.stat().st_mode) == 0o600

    written = settings.read_bytes(), state.read_bytes()
    again = hippo("setup", "claude-code", "--json")
    assert [x["action"] for x in again.records] == ["unchanged", "unchanged"]
    assert (settings.read_bytes(), state.read_bytes()) == written

    gone = hippo("setup", "claude-code", "--remove", "--json")
    assert [x["action"] for x in gone.records] == ["restored", "restored"]
    assert settings.read_bytes() == CLAUDE_SETTINGS
    assert state.read_bytes() == CLAUDE_STATE


def test_remove_after_someone_else_changed_the_file_takes_out_only_hippos(
        hippo: Hippo, home: Path) -> None:
    settings = put(home / ".claude" / "settings.json", CLAUDE_SETTINGS)
    put(home / ".claude.json", CLAUDE_STATE)
    assert hippo("setup", "claude-code").exit_code == 0
    doc = json.loads(settings.read_bytes())
    doc["permissions"]["allow"].append("Bash(make:*)")  # the user, or Claude Code itself
    settings.write_text(json.dumps(doc, indent=4))
    r = hippo("setup", "claude-code", "--remove", "--json")
    assert [x["action"] for x in r.records] == ["removed", "restored"]
    expected = json.loads(CLAUDE_SETTINGS)
    expected["permissions"]["allow"].append("Bash(make:*)")
    assert json.loads(settings.read_bytes()) == expected


def test_codex_toml_keeps_comments_order_and_other_entries(hippo: Hippo, home: Path) -> None:
    config = put(home / ".codex" / "config.toml", CODEX_CONFIG)
    r = hippo("setup", "codex", "--json")
    assert r.exit_code == 0, r.stderr
    assert "/hooks" in r.stderr  # Codex runs a new hook only once trusted: said so
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG.decode().split("\n# a notification")[0])
    assert "# ask before running anything outside the sandbox" in text
    doc = tomlkit.parse(text).unwrap()
    assert doc["mcp_servers"]["context7"] == {"command": "npx",
                                              "args": ["-y", "@upstash/context7-mcp"]}
    assert doc["mcp_servers"]["hippo"]["args"][-1] == "mcp"
    assert doc["mcp_servers"]["hippo"]["startup_timeout_sec"] == 30
    assert next(h["command"] for g in doc["hooks"]["Stop"] for h in g["hooks"]) == \
        "notify-send 'codex done'"
    assert {e: [h["command"].split(" hook ")[1] for g in gs for h in g["hooks"]
                if "hippo" in h["command"]] for e, gs in doc["hooks"].items()} == {
        "Stop": ["codex stop"], "SessionStart": ["codex session-start"],
        "UserPromptSubmit": ["codex prompt"], "SessionEnd": ["codex session-end"]}
    assert hippo("setup", "codex", "--json").records[0]["action"] == "unchanged"
    assert hippo("setup", "codex", "--remove").exit_code == 0
    assert config.read_bytes() == CODEX_CONFIG


def test_codex_hooks_go_to_hooks_json_when_the_layer_keeps_them_there(
        hippo: Hippo, home: Path) -> None:
    hooks_json = put(home / ".codex" / "hooks.json", b'{"hooks": {"Stop": [{"hooks": '
                     b'[{"type": "command", "command": "say done"}]}]}}\n')
    r = hippo("setup", "codex", "--json")
    assert [Path(x["file"]).name for x in r.records] == ["config.toml", "hooks.json"]
    config = tomlkit.parse((home / ".codex" / "config.toml").read_text()).unwrap()
    assert "hooks" not in config and "hippo" in config["mcp_servers"]
    hooks = json.loads(hooks_json.read_bytes())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "say done"
    assert set(hooks) == {"Stop", "SessionStart", "UserPromptSubmit", "SessionEnd"}


def test_project_scope_files_are_made_and_removed_with_their_folders(
        hippo: Hippo, home: Path, repo: Path) -> None:
    (repo / "src").mkdir()
    os.chdir(repo / "src")  # the project is the repository, from any folder in it
    for agent, files in (("gemini", [".gemini/settings.json"]),
                         ("cursor", [".cursor/mcp.json"]),
                         ("claude-code", [".claude/settings.local.json", ".mcp.json"])):
        r = hippo("setup", agent, "--scope", "project", "--json")
        assert r.exit_code == 0, r.stderr
        assert [x["file"] for x in r.records] == [str(repo / f) for f in files]
        assert all(x["action"] == "created" for x in r.records)
    local = json.loads((repo / ".claude" / "settings.local.json").read_bytes())
    assert local["enabledMcpjsonServers"] == ["hippo"]  # .mcp.json's server, approved
    assert json.loads((repo / ".gemini" / "settings.json").read_bytes())[
        "mcpServers"]["hippo"]["timeout"] == 30000
    for agent in ("gemini", "cursor", "claude-code"):
        r = hippo("setup", agent, "--scope", "project", "--remove", "--json")
        assert {x["action"] for x in r.records} == {"deleted"}
    assert sorted(p.name for p in repo.iterdir()) == [".git", "src"]


@pytest.mark.parametrize("agent,path,data", [
    ("claude-code", ".claude/settings.json", b'{"hooks": {"SessionStart": [}\n'),
    ("claude-code", ".claude.json", b"[1, 2]\n"),
    ("codex", ".codex/config.toml", b'model = "o3"\n[mcp_servers.x\ncommand = 1\n'),
    ("gemini", ".gemini/settings.json", b"{\n  // comments are not JSON\n}\n"),
    ("cursor", ".cursor/mcp.json", b"\xff\xfe{}"),
])
def test_a_config_it_cannot_parse_is_refused_and_left_as_it_was(
        hippo: Hippo, home: Path, agent: str, path: str, data: bytes) -> None:
    bad = put(home / path, data)
    (home / ".claude").mkdir(exist_ok=True)
    before = sorted(p for p in home.rglob("*"))
    r = hippo("setup", agent)
    assert r.exit_code == 78
    assert r.stderr.count("\n") == 1 and str(bad) in r.stderr and "nothing was written" in r.stderr
    assert r.stdout == ""
    assert bad.read_bytes() == data
    assert sorted(p for p in home.rglob("*")) == before  # the other file not made either
    assert hippo("setup", agent, "--remove").exit_code == 78
    assert bad.read_bytes() == data


def test_unknown_agent_and_scope_are_usage_errors(hippo: Hippo, home: Path) -> None:
    r = hippo("setup", "vscode")
    assert r.exit_code == 2
    assert r.stderr.strip() == ("hippo: unknown agent 'vscode'; known: claude-code, codex, "
                                "gemini, cursor")
    assert hippo("setup", "codex", "--scope", "team").exit_code == 2


def test_user_scope_makes_the_config_dir_only_for_an_installed_client(
        hippo: Hippo, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    r = hippo("setup", "gemini")
    assert r.exit_code == 78 and r.stderr.count("\n") == 1
    assert "gemini is not installed" in r.stderr
    assert not (home / ".gemini").exists()
    stand_in = bin_dir / "gemini"  # a client on PATH (any executable of that name)
    stand_in.write_text("#!/bin/sh\n")
    stand_in.chmod(0o755)
    assert hippo("setup", "gemini").exit_code == 0
    assert "hippo" in json.loads((home / ".gemini" / "settings.json").read_bytes())[
        "mcpServers"]


def test_remove_with_nothing_installed_says_so(hippo: Hippo, home: Path, repo: Path) -> None:
    put(home / ".cursor" / "mcp.json", CURSOR_MCP)
    r = hippo("setup", "cursor", "--remove")
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr == ("hippo: nothing of hippo's is set up for cursor (user scope); "
                        "nothing changed\n")
    assert (home / ".cursor" / "mcp.json").read_bytes() == CURSOR_MCP
    assert hippo("setup", "codex", "--scope", "project", "--remove").exit_code == 0
    assert not (repo / ".codex").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(hippo: Hippo, home: Path) -> None:
    settings = put(home / ".gemini" / "settings.json", GEMINI_SETTINGS)
    r = hippo("setup", "gemini", "--dry-run")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[:2] == [f"--- {settings}", f"+++ {settings}"]
    assert any(line.startswith('+    "hippo": {') for line in lines)
    assert settings.read_bytes() == GEMINI_SETTINGS
    assert not (Path(os.environ["HIPPO_HOME"]) / "setup").exists()
    assert hippo("setup", "gemini").exit_code == 0
    undo = hippo("setup", "gemini", "--remove", "--dry-run").stdout
    assert undo.startswith(f"--- {settings}") and '-    "hippo": {' in undo
    assert hippo("setup", "gemini", "--dry-run").stdout == ""  # already set up


def test_doctor_lists_agents_and_a_hook_that_no_longer_resolves(
        hippo: Hippo, home: Path, repo: Path) -> None:
    put(home / ".gemini" / "settings.json", GEMINI_SETTINGS)
    assert hippo("add", "a memory", "--embedder", "hash").exit_code == 0
    r = hippo("doctor", "--json")
    assert r.exit_code == 0
    assert r.records[-1] == {"event": "check", "check": "agents", "ok": True,
                             "detail": "no agent set up (`hippo setup AGENT`)"}
    assert hippo("setup", "gemini").exit_code == 0
    assert hippo("setup", "claude-code", "--scope", "project").exit_code == 0
    local = repo / ".claude" / "settings.local.json"
    exe = json.loads(local.read_text())["hooks"]["SessionEnd"][0]["hooks"][0]["command"] \
        .split()[0]
    agents = {x["check"]: x for x in hippo("doctor", "--json").records
              if x["check"].startswith("agent")}
    assert agents == {
        "agent:claude-code:project": {"event": "check", "check": "agent:claude-code:project",
                                      "ok": True, "detail": "hooks SessionStart, "
                                      f"UserPromptSubmit, SessionEnd; MCP server; runs {exe}"},
        "agent:gemini:user": {"event": "check", "check": "agent:gemini:user", "ok": True,
                              "detail": f"MCP server; runs {exe}"}}
    local.write_text(local.read_text().replace(exe, "/gone/venv/bin/hippo"))
    r = hippo("doctor", "--json")
    assert r.exit_code == 1
    bad = next(x for x in r.records if x["check"] == "agent:claude-code:project")
    assert bad["ok"] is False and bad["detail"].endswith("does not resolve: /gone/venv/bin/hippo")


def test_a_symlinked_config_stays_a_link(hippo: Hippo, home: Path, tmp_path: Path) -> None:
    real = put(tmp_path / "dotfiles" / "cursor-mcp.json", CURSOR_MCP)
    (home / ".cursor").mkdir()
    link = home / ".cursor" / "mcp.json"
    link.symlink_to(real)
    assert hippo("setup", "cursor").exit_code == 0
    assert link.is_symlink() and "hippo" in json.loads(real.read_bytes())["mcpServers"]
    assert hippo("setup", "cursor", "--remove").exit_code == 0
    assert link.is_symlink() and real.read_bytes() == CURSOR_MCP


def test_a_file_replaced_since_setup_is_what_remove_gives_back(
        hippo: Hippo, home: Path) -> None:
    """Setup, then the user replaces the file (dotfiles, Claude Code's /hooks), setup again:
    --remove gives back the file as it was before the second setup, never the first's."""
    settings = put(home / ".claude" / "settings.json", b'{"model": "old"}\n')
    assert hippo("setup", "claude-code").exit_code == 0
    settings.write_bytes(b'{"model": "new"}\n')
    assert hippo("setup", "claude-code").exit_code == 0
    assert hippo("setup", "claude-code", "--remove").exit_code == 0
    assert settings.read_bytes() == b'{"model": "new"}\n'


def test_a_file_setup_made_then_someone_filled_is_never_deleted(
        hippo: Hippo, home: Path) -> None:
    state = home / ".claude.json"
    (home / ".claude").mkdir()
    assert hippo("setup", "claude-code").exit_code == 0
    state.write_bytes(b'{"numStartups": 7}\n')  # Claude Code wrote it anew, hippo's gone
    assert hippo("setup", "claude-code").exit_code == 0
    assert hippo("setup", "claude-code", "--remove").exit_code == 0
    assert json.loads(state.read_bytes()) == {"numStartups": 7}


def test_remove_never_puts_back_an_older_install_of_hippo(hippo: Hippo, home: Path) -> None:
    """A file that held an older hippo's entries before setup ever recorded anything."""
    old = {"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": "/gone/venv/bin/hippo hook claude-code session-end"}]}]},
        "model": "x"}
    settings = put(home / ".claude" / "settings.json", json.dumps(old).encode())
    assert hippo("setup", "claude-code").exit_code == 0
    assert hippo("setup", "claude-code", "--remove").exit_code == 0
    assert json.loads(settings.read_bytes()) == {"model": "x"}


@pytest.mark.parametrize("data", [
    b'{"hooks": {"SessionStart": {"matcher": "x"}}}\n',
    b'{"hooks": ["x"]}\n',
    b'{"mcpServers": "none"}\n',
])
def test_a_value_of_the_wrong_shape_is_refused_not_replaced(
        hippo: Hippo, home: Path, data: bytes) -> None:
    path = home / (".claude.json" if b"mcpServers" in data else ".claude/settings.json")
    put(path, data)
    (home / ".claude").mkdir(exist_ok=True)
    r = hippo("setup", "claude-code")
    assert r.exit_code == 78, r.stderr
    assert r.stderr.count("\n") == 1 and str(path) in r.stderr
    assert path.read_bytes() == data


def test_a_file_it_cannot_write_leaves_every_file_as_it_was(
        hippo: Hippo, home: Path, tmp_path: Path) -> None:
    """The second file of a setup cannot be written (a link into a folder that is gone;
    the same path as a read-only file for a user who is not root): the first one is put
    back, and the exit is 1, a file hippo may not write (docs/usage.md)."""
    settings = put(home / ".claude" / "settings.json", CLAUDE_SETTINGS)
    (home / ".claude.json").symlink_to(tmp_path / "gone" / "claude.json")
    r = hippo("setup", "claude-code")
    assert r.exit_code == 1, r.stderr
    assert r.stderr.count("\n") == 1 and "cannot write" in r.stderr
    assert "nothing was written" in r.stderr
    assert settings.read_bytes() == CLAUDE_SETTINGS
    assert hippo("setup", "claude-code", "--remove").exit_code == 0
    assert settings.read_bytes() == CLAUDE_SETTINGS


def test_a_link_to_a_file_not_there_yet_stays_a_link(hippo: Hippo, home: Path,
                                                     tmp_path: Path) -> None:
    """Dotfiles linked before the file exists: setup writes the file the link names, and
    --remove deletes that file, never the user's link."""
    (tmp_path / "dotfiles").mkdir()
    real = tmp_path / "dotfiles" / "cursor-mcp.json"
    (home / ".cursor").mkdir()
    link = home / ".cursor" / "mcp.json"
    link.symlink_to(real)
    assert hippo("setup", "cursor").exit_code == 0
    assert link.is_symlink() and "hippo" in json.loads(real.read_bytes())["mcpServers"]
    assert hippo("setup", "cursor", "--remove").exit_code == 0
    assert link.is_symlink() and not real.exists()
