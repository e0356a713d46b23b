"""README stays true: the agent recipes it shows are the tested ones in docs/agents.md."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_carries_the_tested_agent_recipes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    agents = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    body = agents.split("\n", 1)[1].strip()  # without its own title
    assert body in readme, "README's Agents section differs from docs/agents.md; copy it over"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "python -m pytest" in ci and "-e '.[test]'" in ci
