"""`hippo ingest`: archive finished agent sessions into Echo (watermarks, idle gate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode

FORMATS = ("claude-code", "codex", "gemini-cli", "aider", "generic-jsonl", "text")


def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Transcript files or directories, or - to read one transcript from stdin "
        "(default: ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, or [ingest] paths "
        "in the config; $CLAUDE_CONFIG_DIR and $CODEX_HOME move the first two).",
        show_default=False)] = None,
    idle_minutes: Annotated[float | None, typer.Option(
        "--idle-minutes", min=0.0, help="Only files idle this long (default 30; 0 skips the "
        "gate).", show_default=False)] = None,
    backstop: Annotated[bool, typer.Option(
        "--backstop", help="Daily run: re-check every known file, even unchanged-looking ones.")
    ] = False,
    fmt: Annotated[str | None, typer.Option(
        "--format", help="Force a reader: " + ", ".join(FORMATS) + ".", show_default=False,
        autocompletion=lambda: list(FORMATS))] = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Archive transcripts into Echo; prints one JSON line per file and a summary.

    At a terminal: a progress bar by bytes (rate, time left), a line per file read,
    deferred or skipped, and a readable summary; JSON lines when piped or with --json.
    Ctrl-C keeps every file already read (exit 130); a re-run resumes at the watermarks.
    Exit 3 when some input was skipped (each one reported). Agents' own notes under the
    folders read (Claude Code's auto memory) and the person's instruction files of their
    projects (CLAUDE.md, AGENTS.md, GEMINI.md) are read into the Brain too, when they
    changed ([agents] notes = false: not).

    \b
    Examples:
      hippo ingest --idle-minutes 0 ~/.claude/projects
      hippo ingest --format codex - < rollout.jsonl
      hippo ingest --json | jq 'select(.event == "summary")'
    """
    from hippo.app import ingest as app
    from hippo.cli.jobout import JobOutput
    from hippo.console.output import stderr
    from hippo.console.progress import progress
    from hippo.errors import UsageError

    app.check_format(fmt)
    stdin = [p for p in paths or [] if str(p) == "-"]
    if stdin and len(paths or []) > 1:
        raise UsageError("- (stdin) is one transcript: give it alone, not with other paths")
    out = JobOutput(json)
    h = open_hippo(ctx, db=db, embedder=embedder)
    try:
        done = app.ingest(h, paths, idle_minutes=idle_minutes, fmt=fmt, backstop=backstop,
                          piped=_piped() if stdin else None, emit=out.event, progress=progress)
    except app.Interrupted as stop:
        stderr(f"hippo: interrupted: kept {stop.kept} of {stop.files} files read "
               f"({stop.chunks} chunks); the file in progress was not stored. "
               "Run `hippo ingest` again to resume where this run stopped")
        raise typer.Exit(130) from None
    out.summary(done.summary)
    if done.partial:
        raise typer.Exit(int(ExitCode.PARTIAL))


def _piped() -> bytes:
    """The transcript on stdin."""
    import sys

    return sys.stdin.buffer.read()
