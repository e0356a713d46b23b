"""`hippo ingest`: archive finished agent sessions into Echo (watermarks, idle gate)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode

if TYPE_CHECKING:
    from hippo.core import Hippo

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
    from hippo import jobs
    from hippo.cli.jobout import JobOutput
    from hippo.errors import UsageError
    from hippo.ingest.readers import get_reader
    from hippo.ingest.run import Ingestor, default_paths, discover
    from hippo.output import stderr
    from hippo.progress import progress

    if fmt:
        try:
            get_reader(fmt)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    stdin = [p for p in paths or [] if str(p) == "-"]
    if stdin and len(paths or []) > 1:
        raise UsageError("- (stdin) is one transcript: give it alone, not with other paths")
    out = JobOutput(json)
    h = open_hippo(ctx, db=db, embedder=embedder)
    conf = h.settings.table("ingest")
    idle = h.settings["idle_minutes"] if idle_minutes is None else idle_minutes
    with _stdin_file(h, fmt) if stdin else contextlib.nullcontext() as piped:
        if piped is not None:
            roots, idle = [piped], 0.0  # what is piped in is finished by definition
        else:
            roots = list(paths) if paths else default_paths(conf.get("paths"))
        files = list(discover(roots))
        ing = Ingestor(h, idle_minutes=float(idle), fmt=fmt, backstop=backstop)
        try:
            with jobs.job(h.db, "ingest") as run:
                total = sum(ing.pending(f) for f in files)
                with progress("ingest", total=total, unit="bytes") as bar:
                    summary = ing.run(files, lambda r: out.event(r.event()), bar.advance)
                summary["run_id"] = run.id
                run.summary = summary
                partial = bool(summary["skipped"])
                run.outcome = "partial" if partial else "ok"
        except KeyboardInterrupt:
            done = ing.totals["ingested"] + ing.totals["reread"]
            stderr(f"hippo: interrupted: kept {done} of {len(files)} files read "
                   f"({ing.totals['chunks']} chunks); the file in progress was not stored. "
                   "Run `hippo ingest` again to resume where this run stopped")
            raise typer.Exit(130) from None
    notes = _notes(h, roots if piped is None else [], default=not paths,
                   emit=lambda ev: out.event(ev))
    if notes is not None:
        summary["notes"] = notes
    out.summary(summary)
    if partial:
        raise typer.Exit(int(ExitCode.PARTIAL))


def _notes(h: Hippo, roots: list[Path], *, default: bool,
           emit: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
    """Agents' own notes under the folders read (Claude Code's auto memory), the
    instruction files of their projects, and by default the person's user-wide ones: read
    into the Brain in a job of their own (`hippo.ingest.notes`; `[agents] notes = false`
    skips it). None when there was nothing to read."""
    from hippo import jobs
    from hippo.agents_hint import AgentSettings
    from hippo.ingest.notes import NotesSync, found_under, present, user_files

    if not AgentSettings.from_settings(h.settings).notes:
        return None
    files = found_under(h, roots) + (user_files() if default else [])
    if not present(files):
        return None
    with jobs.job(h.db, "notes") as run:
        summary = NotesSync(h, run_id=run.id).run(files, emit)
        summary.update(run_id=run.id)
        del summary["event"]
        run.summary = summary
        run.outcome = "ok"
    return summary


@contextlib.contextmanager
def _stdin_file(h: Hippo, fmt: str | None) -> Iterator[Path]:
    """Stdin as a file the readers can seek in, removed afterwards. Named by its content
    (beside the database, user-only), so the same transcript piped twice is recognised by
    its watermark and not stored twice."""
    import hashlib
    import os
    import sys

    from hippo.errors import UsageError

    data = sys.stdin.buffer.read()
    if not data.strip():
        raise UsageError("nothing on stdin: pipe a transcript into `hippo ingest -`")
    from hippo.config import home_dir

    folder = (h.db.path.parent if h.db.path else home_dir()) / "hippo-stdin"
    folder.mkdir(mode=0o700, exist_ok=True)
    name = hashlib.sha256(data).hexdigest()[:24]
    suffix = ".md" if fmt == "aider" else ".txt" if fmt == "text" else ".jsonl"
    path = folder / f"stdin-{name}{suffix}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.utime(path, ns=(0, 0))  # a fixed time: the same bytes again look unchanged
        yield path
    finally:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()
