"""The command table: name → (module, function). Modules are imported only when needed.

Every agent call, cron job and Tab completion starts the CLI cold, so `hippo search` builds
the search command alone; `hippo --help` (which lists them all) builds every command.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from typer.core import TyperGroup

# In the order `hippo --help` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "search": ("hippo.cli.search", "search"),
    "add": ("hippo.cli.add", "add"),
    "show": ("hippo.cli.show", "show"),
    "list": ("hippo.cli.listing", "list_"),
    "context": ("hippo.cli.context", "context"),
    "guidance": ("hippo.cli.guidance", "guidance"),
    "echo": ("hippo.cli.echo", "echo"),
    "ingest": ("hippo.cli.ingest", "ingest"),
    "extract": ("hippo.cli.extract", "extract"),
    "consolidate": ("hippo.cli.consolidate", "consolidate"),
    "retire": ("hippo.cli.retire", "retire"),
    "done": ("hippo.cli.lifecycle", "done"),
    "verify": ("hippo.cli.lifecycle", "verify"),
    "edit": ("hippo.cli.lifecycle", "edit"),
    "supersede": ("hippo.cli.lifecycle", "supersede"),
    "pin": ("hippo.cli.forget", "pin"),
    "unpin": ("hippo.cli.forget", "unpin"),
    "forget": ("hippo.cli.forget", "forget"),
    "undo": ("hippo.cli.undo", "undo"),
    "export": ("hippo.cli.export", "export"),
    "import": ("hippo.cli.export", "import_"),
    "reindex": ("hippo.cli.reindex", "reindex"),
    "stats": ("hippo.cli.stats", "stats"),
    "doctor": ("hippo.cli.doctor", "doctor"),
    "config": ("hippo.cli.config_cmd", "config"),
    "hook": ("hippo.cli.hook", "hook"),
    "cron": ("hippo.cli.cron", "cron"),
}


class LazyGroup(TyperGroup):
    """A Typer group that builds a command from its module on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            import typer.main
            from typer.models import CommandInfo

            from hippo.cli.common import handled

            module, attr = COMMANDS[cmd_name]
            info = CommandInfo(name=cmd_name, callback=handled(getattr(import_module(module), attr)))
            self.commands[cmd_name] = typer.main.get_command_from_info(
                info, pretty_exceptions_short=True, rich_markup_mode=None)
        return self.commands.get(cmd_name)

    def load_all(self) -> LazyGroup:
        """Build every command (for docs generation and introspection)."""
        for name in COMMANDS:
            self.get_command(None, name)
        return self
