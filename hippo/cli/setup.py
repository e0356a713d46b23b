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
    import hippo.setup as st
    from hippo.output import emit
    from hippo.setup.clients import hippo_argv
    from hippo.setup.files import State

    db = root_flags(ctx).get("db")
    state = State()
    cwd = os.getcwd()
    if remove:
        changes = st.plan_remove(agent, scope, cwd, state)
    else:
        changes = st.plan(agent, scope, cwd, hippo_argv(db))
    if remove and all(ch.action == "absent" for ch in changes):
        if not dry_run:
            st.apply(changes, agent, scope, state, removing=True)  # forget stale records
        sys.stderr.write(f"hippo: nothing of hippo's is set up for {agent} ({scope} scope); "
                         "nothing changed\n")
        return
    if dry_run:
        sys.stdout.write(st.dry_run(changes))
        return
    records = st.apply(changes, agent, scope, state, removing=remove)
    emit([r for r in records if r["action"] != "absent"], json_flag=json,
         columns=("agent", "scope", "action", "file", "backup"))
    if not remove and any(ch.differs for ch in changes) and agent in NOTES:
        sys.stderr.write(f"hippo: {NOTES[agent]}\n")
