"""`hippo mcp`: serve the memory to an agent as MCP tools over stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, open_hippo


def mcp(
    ctx: typer.Context,
    max_writes: Annotated[int | None, typer.Option(
        "--max-writes", min=0, show_default=False,
        help="Writes (remember, supersede, forget, done, verify) one session may make "
             "(default 50, or [mcp] max_writes).")] = None,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,  # accepted everywhere: stdout is JSON-RPC either way
) -> None:
    """Serve MCP over stdio: search, remember, echo, context, get and more as agent tools.

    An agent's client starts it (`claude mcp add hippo -- hippo mcp`; docs/agents.md has
    every client's setup). stdout carries only protocol messages; diagnostics go to
    stderr. The project is the one of the directory the client starts it in. It exits
    on EOF or SIGTERM.
    """
    from hippo.mcp.stdio import serve

    h = open_hippo(ctx, db=db, project=project, embedder=embedder)
    serve(h, max_writes=max_writes)
