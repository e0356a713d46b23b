"""The lazy command table stays in step with the commands themselves."""

from __future__ import annotations

import re
from importlib import import_module

from hippo.cli.commands import COMMANDS, SUMMARIES


def test_every_command_has_its_own_first_sentence_as_summary() -> None:
    assert list(SUMMARIES) == list(COMMANDS)
    for name, (module, attr) in COMMANDS.items():
        doc = re.sub(r"\s+", " ", (getattr(import_module(module), attr).__doc__ or "").strip())
        assert doc.startswith(SUMMARIES[name]), f"{name}: update SUMMARIES in commands.py"


def test_help_lists_commands_without_importing_them(cli) -> None:
    import sys

    for module, _ in COMMANDS.values():
        sys.modules.pop(module, None)
    r = cli("--help", db=None, embedder=None)
    assert r.exit_code == 0
    assert "search" in r.stdout and "Search memories" in r.stdout
    assert "hippo.cli.search" not in sys.modules
