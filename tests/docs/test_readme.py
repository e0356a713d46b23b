"""README stays true and short: its agent lines are `hippo setup`'s agents and the plugin
in this repository, its test command CI's."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_agent_lines_are_the_setup_agents_and_the_plugin() -> None:
    """One `hippo setup AGENT` line per agent setup knows; the plugin line names the
    marketplace and plugin this repository ships; docs/agents.md has the details."""
    import json
    import re

    from hippo.setup import AGENTS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    agents = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    shown = re.findall(r"^- [^:]+: `hippo setup ([a-z-]+)`", readme, flags=re.MULTILINE)
    assert shown == list(AGENTS)
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    plugin = f"{market['plugins'][0]['name']}@{market['name']}"
    assert f"claude plugin install {plugin}`" in readme and f"install {plugin}" in agents
    for line in ("hippo hook claude-code session-start", "hippo hook claude-code prompt",
                 "hippo setup claude-code --scope project", "--remove", "--dry-run"):
        assert line in agents, line
    assert len(readme.splitlines()) <= 150, "README is at most ~150 lines; move detail to docs/"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "python -m pytest" in ci and "-e '.[test]'" in ci
