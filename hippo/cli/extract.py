"""`hippo extract`: turn new Echo content into durable Brain memories (with provenance)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode


def extract(
    ctx: typer.Context,
    extractor: Annotated[str | None, typer.Option(
        "--extractor", envvar="HIPPO_EXTRACTOR",
        help="rules (offline patterns, default), llm (OpenAI-compatible chat endpoint) or "
        "agent (your agent CLI, headless: [extract] agent_command); config: [extract] "
        "extractor.", show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Chat model for --extractor llm (config: [extract] model; default "
        "gpt-4o-mini).", show_default=False)] = None,
    session: Annotated[str | None, typer.Option(
        "--session", help="Extract every chunk of this Echo session again (e.g. one a run "
        "skipped); the watermark does not move.", show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would be written; write nothing.")] = False,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Extract memories from new Echo chunks; one JSON line per memory and session, then a
    summary. Exit 3 when a session was skipped, 75 when a spend cap, an open circuit or a
    failing provider stopped the run (nothing of the session in progress is written).

    At a terminal: a line per memory and a readable summary; JSON lines when piped or with
    --json. Ctrl-C keeps the sessions already extracted (exit 130); a re-run goes on.

    \b
    Examples:
      hippo extract --dry-run
      hippo extract --extractor llm --model gpt-4o-mini
      hippo extract --extractor agent
      hippo extract --json | jq -r 'select(.event == "memory") | .text'
    """
    from hippo.app import extract as app
    from hippo.cli.jobout import JobOutput
    from hippo.console.output import stderr
    from hippo.console.progress import progress

    out = JobOutput(json)

    def emit(event: dict[str, Any]) -> None:
        out.event(event)

    h = open_hippo(ctx, db=db, embedder=embedder)
    try:
        done = app.extract(h, extractor=extractor, model=model, session=session,
                           dry_run=dry_run, emit=emit, progress=progress)
    except app.Interrupted as stop:
        got = stop.summary
        stderr(f"hippo: interrupted: kept {got.get('added', 0)} memories added and "
               f"{got.get('reinforced', 0)} reinforced from {got.get('sessions', 0)} sessions; "
               "the session in progress was not written. Run `hippo extract` again to go on")
        raise typer.Exit(130) from None
    out.summary(done.summary)
    if done.stopped is not None:
        raise done.stopped
    if done.partial:
        raise typer.Exit(int(ExitCode.PARTIAL))
