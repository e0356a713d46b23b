"""What agents already wrote: Claude Code's auto memory and the person's instruction files,
read into the Brain with provenance to file and line; a changed file ends what it no
longer says; a re-run adds nothing; the agent that loads a file itself does not get it
back in its floor. Files shaped as Claude Code 2.1 writes them (a temp HOME and project)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hippo.ingest.notes import slug, unslug
from tests.extract.conftest import memories

INDEX = """\
# Memory index

- [Redis pool size](redis_pool.md) — why the pool is capped at 20
- The test suite needs `TZ=UTC`; without it two date tests fail

## Debugging
- `ConnectionResetError` on idle sockets: fixed by `health_check_interval=30`
"""
TOPIC = """\
---
name: Redis pool size
description: why the Redis pool is capped at 20
type: project
---

The Redis connection pool is capped at 20 connections.

**Why:** the managed Redis plan allows 25 clients and the worker needs 5.
**How to apply:** raise it only with the plan.
"""
CLAUDE_MD = """\
# shop

## Conventions
- Always run `make lint` before committing.
- Use pnpm, never npm, in the web folder.

```sh
make lint
```
"""
AGENTS_MD = "# Agents\n\nNever push to main directly; open a pull request.\n"


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A temp HOME and a git project `shop` in it, with Claude Code's notes of it and the
    person's instruction files: (project root, its auto-memory folder)."""
    home = tmp_path / "user"
    root = home / "work" / "shop"
    (root / ".git").mkdir(parents=True)
    (root / ".claude" / "rules").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    (root / "AGENTS.md").write_text(AGENTS_MD)
    (root / ".claude" / "rules" / "testing.md").write_text(
        "- Integration tests live in `tests/integration` and need Docker.\n")
    notes = home / ".claude" / "projects" / slug(str(root)) / "memory"
    notes.mkdir(parents=True)
    (notes / "MEMORY.md").write_text(INDEX)
    (notes / "redis_pool.md").write_text(TOPIC)
    return root, notes


def ingest(cli) -> dict:
    r = cli("ingest", "--json")
    assert r.exit_code == 0, r.stderr
    return r.records[-1]


def current(db_path: Path) -> dict[str, dict]:
    """Active memories valid now, by text."""
    return {m["text"]: m for m in memories(db_path)
            if m["status"] == "active" and m["valid_to"] is None}


def test_notes_and_instruction_files_are_read_with_provenance(cli, shop, db_path: Path) -> None:
    root, notes = shop
    summary = ingest(cli)
    assert summary["notes"]["read"] == summary["notes"]["files"] == 5
    mems = current(db_path)
    fix = mems["`ConnectionResetError` on idle sockets: fixed by `health_check_interval=30`"]
    assert (fix["type"], fix["author"], fix["project"]) == ("insight", "machine", "shop")
    assert fix["source"] == {"via": "agent-notes", "agent": "claude-code",
                             "file": str(notes / "MEMORY.md"), "lines": [7, 7]}
    assert {"agent-notes", "loaded-by:claude-code"} <= set(fix["tags"])
    pool = next(m for t, m in mems.items() if t.startswith("The Redis connection pool"))
    assert pool["type"] == "fact" and pool["source"]["lines"] == [7, 10]
    assert "Why: the managed Redis plan allows 25 clients" in pool["text"]
    assert not any("Redis pool size —" in t for t in mems)  # the index line: read there
    lint = mems["Always run `make lint` before committing."]
    assert (lint["type"], lint["author"]) == ("rule", "human")
    assert lint["source"]["file"] == str(root / "CLAUDE.md")
    assert lint["source"]["lines"] == [4, 4]
    push = mems["Never push to main directly; open a pull request."]
    assert "loaded-by:codex" in push["tags"] and push["type"] == "rule"
    assert "Integration tests live in `tests/integration` and need Docker." in mems
    assert not any("make lint" == t for t in mems)  # code blocks are never statements
    # A re-run with no change adds nothing and reads nothing.
    again = ingest(cli)
    assert again["notes"]["read"] == 0 and again["notes"]["added"] == 0
    assert len(memories(db_path)) == len(mems)


def test_a_changed_file_ends_what_it_no_longer_says(cli, shop, db_path: Path) -> None:
    _, notes = shop
    ingest(cli)
    before = current(db_path)
    old = before["The test suite needs `TZ=UTC`; without it two date tests fail"]
    gone = before["`ConnectionResetError` on idle sockets: fixed by `health_check_interval=30`"]
    (notes / "MEMORY.md").write_text(INDEX.replace(
        "two date tests fail", "three date tests fail").replace(
        "- `ConnectionResetError` on idle sockets: fixed by `health_check_interval=30`\n", ""))
    (notes / "redis_pool.md").unlink()
    summary = ingest(cli)["notes"]
    # Added: the edited line, and the index line whose topic file is gone (read there no
    # more); ended: the edited line, the removed one, and the deleted topic file's memory.
    assert (summary["read"], summary["added"], summary["ended"]) == (1, 2, 3)
    after = current(db_path)
    new = after["The test suite needs `TZ=UTC`; without it three date tests fail"]
    rows = {m["id"]: m for m in memories(db_path)}
    assert rows[old["id"]]["valid_to"] is not None
    assert rows[old["id"]]["superseded_by"] == new["id"]
    assert rows[gone["id"]]["valid_to"] is not None and rows[gone["id"]]["superseded_by"] is None
    assert not any(t.startswith("The Redis connection pool") for t in after)
    assert "Always run `make lint` before committing." in after  # other files untouched
    # The default search no longer finds what the file stopped saying.
    hits = cli("search", "health_check_interval ConnectionResetError", "--json",
               "--project", "shop").records
    assert gone["id"] not in [h.get("id") for h in hits]
    # Audited: undo the run and the file's old statements hold again.
    run = cli("stats", "--json", "--no-layers").records[0]["jobs"]["notes"]["run_id"]
    assert cli("undo", run).exit_code == 0
    restored = current(db_path)
    assert old["text"] in restored and gone["text"] in restored
    assert new["text"] not in restored


def test_the_agent_that_loads_a_file_does_not_get_it_back(cli, shop, db_path: Path) -> None:
    root, _ = shop
    ingest(cli)
    from tests.layers.test_hook import payload

    r = cli("hook", "claude-code", "session-start", "--plain",
            input=payload(root, "SessionStart", source="startup"))
    assert r.exit_code == 0, r.stderr
    assert "make lint" not in r.stdout  # Claude Code loads CLAUDE.md itself
    assert "Never push to main directly" in r.stdout  # AGENTS.md: Codex's, not Claude's
    codex = cli("context", "--project", "shop", "--agent", "codex").stdout
    assert "make lint" in codex and "Never push to main" not in codex
    assert "make lint" in cli("context", "--project", "shop").stdout  # no agent: all
    # Nor in its prompt hook's recall, while search finds it.
    asked = "how do I run make lint before committing"
    p = cli("hook", "claude-code", "prompt", "--plain", "--min-score", "0",
            input=payload(root, "UserPromptSubmit", prompt=asked))
    assert p.exit_code == 0 and "make lint" not in p.stdout
    assert "make lint" in cli("search", asked, "--project", "shop", "--format",
                              "markdown").stdout


def test_notes_off(cli, shop, db_path: Path, isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("[agents]\nnotes = false\n")
    assert "notes" not in ingest(cli)
    assert memories(db_path) == []


def _claude() -> str | None:
    folder = os.environ.get("HIPPO_TEST_AGENT_CLIS")
    if folder and (Path(folder) / "claude").exists():
        return str(Path(folder) / "claude")
    return shutil.which("claude")


def test_the_slug_is_the_one_claude_code_writes(tmp_path: Path) -> None:
    claude = _claude()
    if claude is None:
        pytest.skip("no claude CLI: set HIPPO_TEST_AGENT_CLIS to a node_modules/.bin holding "
                    "it (npm install @anthropic-ai/claude-code)")
    home = tmp_path / "user"
    root = tmp_path / "my.proj_x y"
    (root / "sub").mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    subprocess.run([claude, "-p", "hi"], cwd=root / "sub", env={**env, "HOME": str(home)},
                   capture_output=True, timeout=120, check=False)  # stops at "Not logged in"
    made = home / ".claude" / "projects" / slug(str(root)) / "memory"
    assert made.is_dir(), sorted(p.name for p in (home / ".claude" / "projects").iterdir())
    assert unslug(made.parent.name) == str(root)


def test_unslug_walks_down_to_the_directory(tmp_path: Path) -> None:
    deep = tmp_path / "a.b" / "c_d" / "e-f"
    deep.mkdir(parents=True)
    assert unslug(slug(str(deep))) == str(deep)
    assert unslug(slug(str(tmp_path / "nothing" / "here"))) is None


def test_a_session_ending_in_the_project_reads_its_files(hippo_proc, shop, db_path: Path,
                                                         tmp_path: Path) -> None:
    """The session-end job (detached) reads the instruction files and Claude Code's notes
    of the project the session ran in (the hook's `cwd`)."""
    from tests.layers.session_support import CLAUDE_A, copy, jobs, wait_finished
    from tests.layers.test_session_end import session_end

    root, notes = shop
    (root / "src").mkdir()
    transcript = copy(CLAUDE_A, tmp_path / "a.jsonl")
    r = hippo_proc(["--embedder", "hash", "hook", "claude-code", "session-end"],
                   input=session_end(transcript, root / "src"))
    assert r.returncode == 0, r.stderr
    wait_finished(db_path, 1)
    last = jobs(db_path)["last"]
    assert last["outcome"] == "ok" and last["notes"]["read"] == 5, last
    mems = current(db_path)
    assert mems["Always run `make lint` before committing."]["project"] == "shop"
    assert mems["`ConnectionResetError` on idle sockets: fixed by "
                "`health_check_interval=30`"]["source"]["file"] == str(notes / "MEMORY.md")


def test_a_masked_line_the_file_still_says_holds(cli, shop, db_path: Path) -> None:
    """A line with a secret is stored masked; an edit elsewhere in the file does not end
    it (the file still says it), and the re-read adds nothing for it."""
    root, _ = shop
    key = "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for CI"
    (root / "CLAUDE.md").write_text(CLAUDE_MD.replace(
        "## Conventions\n", f"## Conventions\n- {key}\n"))
    ingest(cli)
    masked = next(m for t, m in current(db_path).items() if "AWS_SECRET_ACCESS_KEY" in t)
    assert "wJalrXUtnFEMI" not in masked["text"]
    (root / "CLAUDE.md").write_text(CLAUDE_MD.replace(
        "## Conventions\n", f"## Conventions\n- {key}\n").replace("pnpm", "yarn"))
    summary = ingest(cli)["notes"]
    assert (summary["added"], summary["ended"]) == (1, 1)
    assert masked["text"] in current(db_path)


def test_a_line_two_files_say_holds_while_one_still_says_it(cli, shop, db_path: Path) -> None:
    """CLAUDE.md and AGENTS.md both say a rule (one memory: write-time dedup); CLAUDE.md
    drops it: AGENTS.md still says it, so it holds and search finds it."""
    root, _ = shop
    line = "Never push to main directly; open a pull request."
    (root / "CLAUDE.md").write_text(CLAUDE_MD + f"\n- {line}\n")
    ingest(cli)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    summary = ingest(cli)["notes"]
    assert summary["ended"] == 0
    held = current(db_path)[line]
    assert "loaded-by:codex" in held["tags"]
    hits = cli("search", "push to main pull request", "--json", "--project", "shop").records
    assert held["id"] in [h.get("id") for h in hits]


def test_claude_config_dir_moves_the_default_location(cli, tmp_path: Path, db_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code keeps its projects under $CLAUDE_CONFIG_DIR when set (`hippo setup` writes
    there too): `hippo ingest` with its default locations reads them there."""
    home, config = tmp_path / "home", tmp_path / "claude-config"
    root = home / "work" / "app"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    notes = config / "projects" / slug(str(root)) / "memory"
    notes.mkdir(parents=True)
    (notes / "MEMORY.md").write_text("- The deploy script lives in `ops/deploy.sh`.\n")
    assert ingest(cli)["notes"]["added"] == 1
    assert "The deploy script lives in `ops/deploy.sh`." in current(db_path)


def test_a_deleted_instruction_file_ends_what_it_said(cli, shop, db_path: Path) -> None:
    root, _ = shop
    ingest(cli)
    push = current(db_path)["Never push to main directly; open a pull request."]
    (root / "AGENTS.md").unlink()
    summary = ingest(cli)["notes"]
    assert summary["ended"] == 1
    assert push["text"] not in current(db_path)
    assert "Always run `make lint` before committing." in current(db_path)
    again = ingest(cli)["notes"]  # said once
    assert again["ended"] == 0
