"""`hippo ingest`: archive finished agent sessions into Echo (watermarks, idle gate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, open_hippo
from hippo.errors import ExitCode


def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Transcript files or directories (default: ~/.claude/projects, "
        "~/.codex/sessions, ~/.gemini/tmp, or [ingest] paths in the config).",
        show_default=False)] = None,
    idle_minutes: Annotated[float | None, typer.Option(
        "--idle-minutes", help="Only files idle this long (default 30; 0 skips the gate).",
        show_default=False)] = None,
    backstop: Annotated[bool, typer.Option(
        "--backstop", help="Daily run: re-check every known file, even unchanged-looking ones.")
    ] = False,
    fmt: Annotated[str | None, typer.Option(
        "--format", help="Force a reader: claude-code, codex, gemini-cli, aider, "
        "generic-jsonl, text.", show_default=False)] = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
) -> None:
    """Archive transcripts into Echo; prints one JSON line per file and a summary."""
    from hippo import jobs
    from hippo.errors import UsageError
    from hippo.ingest.readers import get_reader
    from hippo.ingest.run import Ingestor, default_paths, discover
    from hippo.output import write_json_lines
    from hippo.progress import progress

    if fmt:
        try:
            get_reader(fmt)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    h = open_hippo(ctx, db=db, embedder=embedder)
    conf = h.settings.table("ingest")
    roots = list(paths) if paths else default_paths(conf.get("paths"))
    idle = h.settings["idle_minutes"] if idle_minutes is None else idle_minutes
    files = list(discover(roots))
    with jobs.job(h.db, "ingest") as run:
        ing = Ingestor(h, idle_minutes=float(idle), fmt=fmt, backstop=backstop)
        with progress("ingest", total=len(files)) as bar:
            summary = ing.run(files, lambda r: _emit(r.event()), bar.advance)
        summary["run_id"] = run.id
        run.summary = summary
        partial = bool(summary["skipped"])
        run.outcome = "partial" if partial else "ok"
    write_json_lines([summary])
    if partial:
        raise typer.Exit(int(ExitCode.PARTIAL))


def _emit(event: dict[str, object]) -> None:
    """One JSON line per file (the writer's count is not the reader's business)."""
    from hippo.output import write_json_lines

    write_json_lines([event])
