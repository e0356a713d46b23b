"""`hippo setup AGENT`: write hippo's hooks and MCP server into an agent's own config."""

# No `from __future__ import annotations`: Typer evaluates string annotations at each start.
import os
import sys
from typing import Annotated

import typer

from hippo.cli.common import JsonOpt, root_flags

AGENT_NAMES = ("claude-code", "codex", "gemini", "cursor")

NOTES = {
    "codex": "codex: it runs a new or changed hook only once you trust it: start codex and "
             "open /hooks",
    "claude-code": "claude-code: a running session picks the hooks up at its next start",
}


def setup(
    ctx: typer.Context,
    agent: Annotated[str, typer.Argument(help="The agent: claude-code, codex, gemini or "
                                         "cursor.", autocompletion=lambda: list(AGENT_NAMES))],
    scope: Annotated[str, typer.Option(
        "--scope", help="user: the agent's config in your home (every project); project: "
        "the config files of the repository you are in.",
        autocompletion=lambda: ["user", "project"])] = "user",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the change as a unified "
                                          "diff; write nothing.")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Take hippo's entries out again "
                                         "(the file as it was before setup, when nothing "
                                         "else changed it since).")] = False,
    json: JsonOpt = False,
) -> None:
    """Set an agent up: hippo's hooks and MCP server in its own config file.

    Claude Code and Codex get the hooks (session start, each prompt, session end; Codex's
    Stop) and the `hippo mcp` server; Gemini CLI and Cursor the server. The entries are
    merged with what the file holds (other hooks, servers and settings stay), a backup of
    the file is written first (under hippo's home), and a second run changes nothing.
    The commands name this hippo by its absolute path (and the root --db, when given).
    --remove puts back what was there before. A file that cannot be parsed is refused
    (exit 78) and left as it is."""
    from hippo.app.setup import setup as app
    from hippo.console.output import emit

    done = app(agent, scope, os.getcwd(), db=root_flags(ctx).get("db"), dry_run=dry_run,
               remove=remove)
    if done.absent:
        sys.stderr.write(f"hippo: nothing of hippo's is set up for {agent} ({scope} scope); "
                         "nothing changed\n")
        return
    if done.diff is not None:
        sys.stdout.write(done.diff)
        return
    emit(done.records, json_flag=json, columns=("agent", "scope", "action", "file", "backup"))
    if not remove and done.changed and agent in NOTES:
        sys.stderr.write(f"hippo: {NOTES[agent]}\n")
