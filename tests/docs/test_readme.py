"""README stays true and short: its hook recipe is docs/agents.md's, its test command CI's."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_hook_recipe_is_the_tested_one() -> None:
    """The Claude Code settings README shows are the ones docs/agents.md documents."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    agents = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    for line in ("hippo hook claude-code session-start", "hippo hook claude-code prompt"):
        assert line in readme and line in agents, line
    assert len(readme.splitlines()) <= 150, "README is at most ~150 lines; move detail to docs/"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "python -m pytest" in ci and "-e '.[test]'" in ci
