"""`hippo echo`: search the original transcripts (only when asked), or forget a session."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, WideOpt, open_hippo

# At a terminal the text gets the width: the day, not the session's UUID and the
# millisecond; --wide adds where each chunk came from.
COLUMNS = ("id", "score", "date", "text")  # the text names each role ("user: ...")
WIDE = ("id", "score", "session", "project", "started_at", "roles", "source", "text")
# The escaped line breaks a tool's JSON output leaves in a transcript ("a\\n\\nb"): a
# space in the table, like a real line break (JSON lines keep the text as stored).
ESCAPED_BREAKS = re.compile(r"(?:\\r)?\\n|\\t")


def echo(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for (- reads stdin).",
                                                show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many chunks.")] = 5,
    context: Annotated[int, typer.Option(min=0, help="Also show N neighbouring chunks each "
                                         "side.")] = 0,
    session: Annotated[list[str] | None, typer.Option(help="Only this session; repeatable.")]
    = None,
    role: Annotated[list[str] | None, typer.Option(help="user, assistant, tool or summary (a compaction summary); repeatable.")]
    = None,
    since: Annotated[str | None, typer.Option(help="ISO date or 7d, 12h.")] = None,
    until: Annotated[str | None, typer.Option(help="ISO date or 7d, 12h.")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects",
                                               help="Search every project (default).")] = False,
    forget_session: Annotated[str | None, typer.Option(
        "--forget-session", help="Purge this session's chunks, vectors and index rows; "
        "memories extracted from it stay, marked in source.forgotten.",
        show_default=False)] = None,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Search Echo transcript chunks: where each came from (file, lines, session, time).

    \b
    Examples:
      hippo echo "why did we drop the redis cache" --context 1
      hippo echo "migration" --role user --since 7d --wide
      hippo echo --forget-session 4c2ddfdc-b619-4525-8d03-1950fb1b0257
    """
    from hippo.app import echo as app
    from hippo.cli.common import environment
    from hippo.cli.plain import read_text_arg
    from hippo.console.output import emit, stderr, write_json_lines
    from hippo.errors import UsageError

    app.check_roles(role or ())
    env = environment(ctx)  # the call's streams (`hippo.console.environment`)
    h = open_hippo(ctx, db=db, embedder=embedder, read=not forget_session)
    if forget_session:
        gone = app.forget_session(h, forget_session)
        if not gone.checkpointed:
            from hippo.cli.common import purge_left

            stderr(purge_left(gone.label, gone.server, "the session's text").rstrip("\n"), env)
        cited = gone.cited
        if cited:
            shown = " ".join(map(str, cited[:20])) + (" ..." if len(cited) > 20 else "")
            stderr(f"hippo: {len(cited)} memories cite this session and stay, marked "
                   f"source.forgotten (ids {shown}); `hippo forget --hard ID` erases one", env)
        write_json_lines([{"event": "forget-session", "session": forget_session,
                           "chunks": gone.chunks, "memories": cited}], env)
        return
    if query is None:
        raise UsageError("give a query, or --forget-session ID")
    text = read_text_arg(query, env)
    # Echo is searched across projects unless one is named: transcripts are the inspection path.
    res = app.search(h, text, sessions=session or (), project=None if all_projects else project,
                     since=since, until=until, roles=role or (), limit=limit, context=context)
    for d in res.degraded:
        stderr(f"hippo: degraded: {d}", env)
    emit(res.results, json_flag=json, columns=WIDE if wide else COLUMNS, wide=wide,
         shown=_shown, env=env)


def _shown(rec: dict[str, Any]) -> dict[str, Any]:
    from hippo.console.output import day

    lines = f"{rec['line_start']}-{rec['line_end']}"
    return {**rec, "date": day(rec["started_at"]), "started_at": day(rec["started_at"], wide=True),
            "project": rec["project"] or "", "source": f"{rec['source_path']}:{lines}",
            "text": ESCAPED_BREAKS.sub(" ", rec["text"])}
