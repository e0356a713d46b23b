"""Archive agent transcripts into Echo (`hippo ingest`): the files under the roots given
(default: each agent's own folders, or `[ingest] paths`), or one transcript piped in, read
in a job of their own; then the agents' notes and instruction files into the Brain.

The face gives the events' sink and the progress display; `ingest` returns the summary.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.errors import UsageError

if TYPE_CHECKING:
    from hippo.core import Hippo

Emit = Callable[[dict[str, Any]], None]
Progress = Callable[..., Any]  # (name, total=, unit=) -> a context giving `advance(n)`


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run: what was kept (every file read before it; the file in
    progress was not stored)."""

    def __init__(self, kept: int, files: int, chunks: int) -> None:
        super().__init__(kept, files, chunks)
        self.kept, self.files, self.chunks = kept, files, chunks


@dataclass(slots=True)
class Ingested:
    """A run's summary (`run_id`, counts, and `notes` when notes were read), and whether
    some input was skipped (`partial`: each one was reported as an event)."""

    summary: dict[str, Any]
    partial: bool


def check_format(fmt: str | None) -> None:
    """Refuse a reader name there is none of (exit 2)."""
    if fmt:
        from hippo.ingest.readers import get_reader

        try:
            get_reader(fmt)
        except ValueError as exc:
            raise UsageError(str(exc)) from None


def ingest(h: Hippo, paths: list[Path] | None, *, idle_minutes: float | None = None,
           fmt: str | None = None, backstop: bool = False, piped: bytes | None = None,
           emit: Emit, progress: Progress) -> Ingested:
    """Read the transcripts of `paths` (None: the default folders), or the one `piped`
    in (finished by definition: no idle gate), into Echo, each file's result to `emit`;
    then the notes under the folders read. Ctrl-C: `Interrupted`."""
    from hippo.ingest.run import Ingestor, default_paths, discover
    from hippo.ops import jobs

    check_format(fmt)
    conf = h.settings.table("ingest")
    idle = h.settings["idle_minutes"] if idle_minutes is None else idle_minutes
    with _stdin_file(h, piped, fmt) if piped is not None else contextlib.nullcontext() as file:
        if file is not None:
            roots, idle = [file], 0.0  # what is piped in is finished by definition
        else:
            roots = list(paths) if paths else default_paths(conf.get("paths"))
        files = list(discover(roots))
        ing = Ingestor(h, idle_minutes=float(idle), fmt=fmt, backstop=backstop)
        try:
            with jobs.job(h.db, "ingest") as run:
                total = sum(ing.pending(f) for f in files)
                with progress("ingest", total=total, unit="bytes") as bar:
                    summary = ing.run(files, lambda r: emit(r.event()), bar.advance)
                summary["run_id"] = run.id
                run.summary = summary
                partial = bool(summary["skipped"])
                run.outcome = "partial" if partial else "ok"
        except KeyboardInterrupt:
            raise Interrupted(ing.totals["ingested"] + ing.totals["reread"], len(files),
                              ing.totals["chunks"]) from None
    notes = _notes(h, roots if file is None else [], default=not paths, emit=emit)
    if notes is not None:
        summary["notes"] = notes
    return Ingested(summary, partial)


def _notes(h: Hippo, roots: list[Path], *, default: bool, emit: Emit) -> dict[str, Any] | None:
    """Agents' own notes under the folders read (Claude Code's auto memory), the
    instruction files of their projects, and by default the person's user-wide ones: read
    into the Brain in a job of their own (`hippo.ingest.notes`; `[agents] notes = false`
    skips it). None when there was nothing to read."""
    from hippo.ingest.notes import NotesSync, found_under, present, user_files
    from hippo.layers.hint import AgentSettings
    from hippo.ops import jobs

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
def _stdin_file(h: Hippo, data: bytes, fmt: str | None) -> Iterator[Path]:
    """What was piped in as a file the readers can seek in, removed afterwards. Named by
    its content (beside the database, user-only), so the same transcript piped twice is
    recognised by its watermark and not stored twice."""
    import hashlib
    import os

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
