"""`hippo search` says where to look when it finds nothing, on stderr only; the Markdown
form for prompts leaves out what does not matter (the prompt hook's floor)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hippo.layers.recall import MIN_SCORE


def _session(tmp_path: Path, project_dir: Path, n: int = 3) -> Path:
    path = tmp_path / "s.jsonl"
    lines = [{"type": "user", "sessionId": "5e551011-0000-4000-8000-000000000001",
              "uuid": f"u{i}", "cwd": str(project_dir), "timestamp": f"2026-11-30T10:0{i}:00Z",
              "message": {"role": "user", "content": f"the flaky deploy of step {i} again"}}
             for i in range(n)]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


@pytest.fixture
def echo_only(cli, tmp_path: Path) -> int:
    """Echo holds chunks of project `webapp`; the Brain holds nothing."""
    project_dir = tmp_path / "webapp"
    project_dir.mkdir()
    r = cli("ingest", str(_session(tmp_path, project_dir)), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    return int(r.records[-1]["chunks"])


@pytest.mark.parametrize("flags", [(), ("--json",), ("--format", "table")])
def test_an_empty_brain_beside_echo_points_at_echo_on_stderr(cli, echo_only: int,
                                                             flags: tuple[str, ...]) -> None:
    r = cli("search", "-p", "webapp", *flags, "flaky deploy")
    assert r.exit_code == 0
    assert r.stdout == ""  # stdout is data only, JSON or not
    assert r.stderr == (f"hippo: no memories match; Echo holds {echo_only} "
                        f"chunk{'' if echo_only == 1 else 's'} of this project's sessions: try "
                        "`hippo echo 'flaky deploy'`, or `hippo extract` to learn memories "
                        "from them\n")


def test_no_echo_hint_when_the_brain_has_memories_or_echo_is_of_another_project(
        cli, echo_only: int) -> None:
    assert cli("search", "-p", "other", "flaky deploy").stderr == ""
    assert cli("add", "-p", "webapp", "the deploy uses blue green").exit_code == 0
    r = cli("search", "-p", "webapp", "zebra crossing unrelated")
    assert "Echo holds" not in r.stderr


def test_all_projects_counts_every_projects_sessions(cli, echo_only: int) -> None:
    """From another project's directory, --all-projects with an empty Brain: the hint
    counts every project's sessions (it printed nothing at all)."""
    r = cli("search", "-p", "other", "--all-projects", "flaky deploy")
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == (f"hippo: no memories match; Echo holds {echo_only} "
                        f"chunk{'' if echo_only == 1 else 's'} of every project's sessions: "
                        "try `hippo echo 'flaky deploy'`, or `hippo extract` to learn memories "
                        "from them\n")
    assert cli("add", "-p", "elsewhere", "a memory in another project").exit_code == 0
    assert cli("search", "-p", "other", "--all-projects", "flaky deploy").stderr == ""


def test_both_hints_when_other_projects_hold_memories(cli, echo_only: int) -> None:
    assert cli("add", "-p", "elsewhere", "a memory in another project").exit_code == 0
    r = cli("search", "-p", "webapp", "flaky deploy")
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("hippo: no memories match; Echo holds")
    assert lines[1].startswith("hippo: no match in project 'webapp' or global memories; 1 "
                               "active memory is in other projects")


PIZZA = "thanks, that was a great pizza"


def test_markdown_defaults_to_the_prompt_hooks_floor(cli) -> None:
    seed = "".join(orjson.dumps({"text": t}).decode() + "\n" for t in (
        "The staging cluster runs in eu-west-1", "Deploys go through make stage",
        "Use ruff for linting, and mypy for the types"))
    assert cli("add", "-", input=seed, embedder="local").exit_code == 0
    assert MIN_SCORE == 0.3
    r = cli("search", "--format", "markdown", PIZZA, embedder="local")
    every = cli("search", "--json", "--min-score", "0", PIZZA, embedder="local").records
    assert every and max(x["score"] for x in every) < MIN_SCORE  # nothing relevant...
    assert r.exit_code == 0 and r.stdout == ""  # ...so nothing for the prompt
    assert r.stderr.startswith(f"hippo: no result scored {MIN_SCORE:g} or more")
    kept = cli("search", "--format", "markdown", "--min-score", "0", PIZZA, embedder="local")
    assert kept.stdout.startswith("## Relevant memories")  # 0 still keeps everything
    relevant = cli("search", "--format", "markdown", "staging cluster region", embedder="local")
    assert "eu-west-1" in relevant.stdout
    # The other formats keep their default of 0.
    assert len(cli("search", "--json", PIZZA, embedder="local").records) == len(every)
