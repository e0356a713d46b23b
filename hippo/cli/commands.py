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
    "project": ("hippo.cli.project", "project"),
    "export": ("hippo.cli.export", "export"),
    "import": ("hippo.cli.export", "import_"),
    "reindex": ("hippo.cli.reindex", "reindex"),
    "stats": ("hippo.cli.stats", "stats"),
    "doctor": ("hippo.cli.doctor", "doctor"),
    "config": ("hippo.cli.config_cmd", "config"),
    "setup": ("hippo.cli.setup", "setup"),
    "hook": ("hippo.cli.hook", "hook"),
    "mcp": ("hippo.cli.mcp", "mcp"),
    "serve": ("hippo.cli.serve", "serve"),
    "cron": ("hippo.cli.cron", "cron"),
    "team": ("hippo.cli.team", "team"),
}

# First sentence of each command's help, so `hippo --help` lists the commands without
# importing them (tests/docs/test_commands_table.py keeps these equal to the docstrings).
SUMMARIES: dict[str, str] = {
    "search": "Search memories: keywords and meaning together, best first.",
    "add": "Add a memory.",
    "show": "Show memories: every field, where each came from, and what changed it.",
    "list": "List memories, newest first (current project and global ones by default).",
    "context": "Print the rule floor: active rules of the project and global ones, within a budget.",
    "guidance": "Print the domain guidance of a route: procedural memories of the project and global ones.",
    "echo": "Search Echo transcript chunks: where each came from (file, lines, session, time).",
    "ingest": "Archive transcripts into Echo; prints one JSON line per file and a summary.",
    "extract": "Extract memories from new Echo chunks; one JSON line per memory and session, then a summary.",
    "consolidate": "Merge near-duplicate machine memories of one type and project; JSON line per event.",
    "retire": "Retire done memories and episodic ones past their window, unless pinned or canonical.",
    "done": "Mark tasks/todos done: out of default search, kept until `hippo retire`.",
    "verify": "Confirm memories are still true: confirmed_at = now, so their freshness restarts.",
    "edit": "Correct a memory's text, type, tier, importance, tags or project (audited).",
    "supersede": "Mark OLD as replaced by NEW: it leaves default search (see --include-superseded).",
    "pin": "Pin memories: never retired or merged automatically.",
    "unpin": "Unpin memories.",
    "forget": "Forget memories: soft delete (audited, restorable), or --hard purge.",
    "undo": "Undo a run: text, status, links, vectors and FTS back as they were; itself audited.",
    "project": "List projects, rename one, or merge one into another (audited; `hippo undo` reverts).",
    "export": "Export every memory (all statuses) or every Echo chunk as JSON lines, in id order.",
    "import": "Import an export exactly (ids, timestamps, authorship, status, provenance).",
    "reindex": "Re-embed a store; old vectors serve searches until the new set is complete.",
    "stats": "Show what is in the database and how healthy it is.",
    "doctor": "Check the database; exit 1 when a problem remains (after --fix, if given).",
    "config": "Show effective settings and paths with their origin (flag, env, file, default).",
    "setup": "Set an agent up: hippo's hooks and MCP server in its own config file.",
    "hook": "Answer an agent hook: read its JSON on stdin, print the context it adds.",
    "mcp": "Serve MCP over stdio: search, remember, echo, context, get and more as agent tools.",
    "serve": "Run the warm server: searches, echo, context and hooks answered in milliseconds.",
    "cron": "Print crontab lines: hourly ingest+extract, daily backstop, nightly consolidate+retire.",
    "team": "Set up a team store on PostgreSQL: per-member roles, row-level security (admin).",
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
            mod = import_module(module)
            group = getattr(mod, "GROUP", None)  # a command with subcommands (`project`)
            if group is not None:
                self.commands[cmd_name] = typer.main.get_group(group)
            else:
                info = CommandInfo(name=cmd_name, callback=handled(getattr(mod, attr)))
                self.commands[cmd_name] = typer.main.get_command_from_info(
                    info, pretty_exceptions_short=True, rich_markup_mode=None)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of `hippo --help`, from SUMMARIES (no command module imported)."""
        from typer._click.utils import make_default_short_help

        width = formatter.width - 6 - max(len(n) for n in COMMANDS)
        with formatter.section("Commands"):
            formatter.write_dl([(name, make_default_short_help(SUMMARIES[name], width))
                                for name in COMMANDS])

    def load_all(self) -> LazyGroup:
        """Build every command (for docs generation and introspection)."""
        for name in COMMANDS:
            self.get_command(None, name)
        return self
