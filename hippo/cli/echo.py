"""`hippo echo`: search the original transcripts (only when asked), or forget a session."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, open_hippo

COLUMNS = ("id", "score", "session", "started_at", "roles", "text")


def echo(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for (- reads stdin).",
                                                show_default=False)] = None,
    limit: Annotated[int, typer.Option(help="How many chunks.")] = 5,
    context: Annotated[int, typer.Option(help="Also show N neighbouring chunks each side.")] = 0,
    session: Annotated[list[str] | None, typer.Option(help="Only this session; repeatable.")]
    = None,
    role: Annotated[list[str] | None, typer.Option(help="user, assistant, tool or summary (a compaction summary); repeatable.")]
    = None,
    since: Annotated[str | None, typer.Option(help="ISO date or 7d, 12h.")] = None,
    until: Annotated[str | None, typer.Option(help="ISO date or 7d, 12h.")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects",
                                               help="Search every project (default).")] = False,
    forget_session: Annotated[str | None, typer.Option(
        "--forget-session", help="Purge this session's chunks, vectors and index rows.",
        show_default=False)] = None,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Search Echo transcript chunks: where each came from (file, lines, session, time)."""
    from hippo.cli.plain import read_text_arg
    from hippo.errors import UsageError
    from hippo.output import emit, stderr, write_json_lines
    from hippo.retrieve.echo import EchoFilters, search
    from hippo.timeutil import iso, parse_since

    h = open_hippo(ctx, db=db, embedder=embedder, read=not forget_session)
    if forget_session:
        from hippo import echo as store

        with h.db.transaction():
            n = store.forget_session(h.db, forget_session)
        if not h.db.checkpoint():
            stderr(f"hippo: warning: another process is reading {h.db.path}; the session's "
                   "text stays in its -wal file until the last process using it exits")
        write_json_lines([{"event": "forget-session", "session": forget_session, "chunks": n}])
        return
    if query is None:
        raise UsageError("give a query, or --forget-session ID")
    text = read_text_arg(query)
    # Echo is searched across projects unless one is named: transcripts are the inspection path.
    projects = [project] if project and not all_projects else None
    f = EchoFilters(sessions=session or [], projects=projects,
                    since=iso(parse_since(since)) if since else None,
                    until=iso(parse_since(until)) if until else None, roles=role or [])
    res = search(h, text, filters=f, limit=max(limit, 1), context=max(context, 0))
    for d in res.degraded:
        stderr(f"hippo: degraded: {d}")
    emit(res.results, json_flag=json, columns=COLUMNS)
