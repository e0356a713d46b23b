"""`hippo extract`: turn new Echo content into durable Brain memories (with provenance)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ConfigError, ExitCode, HippoError, UsageError


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
    from hippo import jobs
    from hippo.cli.jobout import JobOutput
    from hippo.extract import get
    from hippo.extract.run import Extraction
    from hippo.extract.settings import ExtractSettings
    from hippo.output import stderr
    from hippo.progress import progress

    out = JobOutput(json)

    def emit(event: dict[str, Any]) -> None:
        out.event(event)

    h = open_hippo(ctx, db=db, embedder=embedder)
    conf = ExtractSettings.from_settings(h.settings, extractor=extractor, model=model)
    try:
        ex = get(conf.extractor, h, conf)
    except UsageError as exc:
        if extractor is None:  # the name came from the config file
            raise ConfigError(f"[extract] extractor in {h.settings.file}: {exc}") from None
        raise
    stopped: HippoError | None = None
    x: Extraction | None = None
    try:
        with jobs.job(h.db, "extract", dry_run=dry_run) as run:
            x = Extraction(h, ex, conf, run_id=run.id, dry_run=dry_run)
            plan = x.plan(session)
            with progress("extract", total=len(plan)) as bar:
                try:
                    summary = x.run(plan, emit, bar.advance, move_watermark=session is None)
                except HippoError as exc:
                    stopped, summary = exc, x.summary
            if not dry_run:
                summary["run_id"] = run.id
            run.summary = summary
            run.outcome = ("stopped" if stopped else
                           "partial" if summary["sessions_skipped"] else "ok")
    except KeyboardInterrupt:
        got = x.summary if x is not None else {}
        stderr(f"hippo: interrupted: kept {got.get('added', 0)} memories added and "
               f"{got.get('reinforced', 0)} reinforced from {got.get('sessions', 0)} sessions; "
               "the session in progress was not written. Run `hippo extract` again to go on")
        raise typer.Exit(130) from None
    out.summary(summary)
    if stopped is not None:
        raise stopped
    if summary["sessions_skipped"]:
        raise typer.Exit(int(ExitCode.PARTIAL))
