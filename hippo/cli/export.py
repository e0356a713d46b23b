"""`hippo export` and `hippo import`: SPEC records as JSON lines, restorable exactly."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode, HippoError, UsageError, scrub


def export(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(help="brain (memories) or echo (transcript chunks).")]
    = "brain",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file "
                                                "(a new user-only file renamed into place; "
                                                "- for stdout) instead of stdout.")] = None,
    salvage: Annotated[bool, typer.Option("--salvage", help="From a damaged database: every "
                                          "readable row, each unreadable one reported "
                                          "(exit 3 when any is).")] = False,
    db: DbOpt = None,
    json: JsonOpt = False,  # accepted everywhere: the export is JSON lines either way
) -> None:
    """Export every memory (all statuses) or every Echo chunk as JSON lines, in id order."""
    from hippo.console.output import dumps
    from hippo.memory import brain

    if store not in ("brain", "echo"):
        raise UsageError(f"unknown store {store!r}; choose brain or echo")
    h = open_hippo(ctx, db=db, read=True)
    report = None
    if salvage:
        from hippo.app.salvage import salvaged

        rows, report = salvaged(h.settings, store)
    else:
        rows = brain.export_rows(h.db) if store == "brain" else h.db.chunks.export()
    count, last = 0, None
    with _destination(output) as out:
        try:
            for rec in rows:
                out.write(dumps(rec))
                count, last = count + 1, rec["id"]
        except UnicodeDecodeError:
            after = f" after id {last}" if last is not None else ""
            raise HippoError(f"a row{after} holds text that is not valid UTF-8 (a damaged "
                             "row); `hippo export --salvage` exports every row, that one with "
                             "the bad bytes replaced") from None
    if report is not None:
        what = "memories" if store == "brain" else "chunks"
        for problem in report.problems():
            sys.stderr.write(f"hippo: salvage: {problem}\n")
        sys.stderr.write(f"hippo: salvaged {count} {what}"
                         f"{'; the rest is reported above' if report.problems() else ''}\n")
        if report.problems():
            raise typer.Exit(int(ExitCode.PARTIAL))


@contextlib.contextmanager
def _destination(output: Path | None) -> Iterator[Any]:
    """stdout, or a new user-only file beside OUTPUT renamed over it once complete: never
    written through a link planted at that path, never left half-written."""
    if output is None or str(output) == "-":
        try:
            yield sys.stdout.buffer
        finally:
            sys.stdout.flush()
        return
    import os
    import tempfile

    if output.is_dir():
        raise UsageError(f"{output} is a directory; give a file name to --output")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp",
                                   dir=output.parent if str(output.parent) else ".")
    except OSError as exc:
        from hippo.app.stores import unwritable

        why = unwritable(output.parent) or exc.strerror
        raise HippoError(f"cannot write {output}: {why}") from None
    try:
        with os.fdopen(fd, "wb") as fh:  # mkstemp: O_EXCL, mode 0600
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, output)  # a symlink at OUTPUT is replaced, not followed
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def import_(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="An export file, or - for stdin.")] = "-",
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Import an export exactly (ids, timestamps, authorship, status, provenance).

    Memories (`hippo export`) and Echo chunks (`hippo export --store echo`), apart or in one
    stream; each memory is linked to the chunks its source names.
    With --json, a summary line on stdout too (`{"event": "summary", "imported": N, ...}`)."""
    from hippo.memory import brain
    from hippo.memory.screen import screen
    from hippo.ops import transfer

    h = open_hippo(ctx, db=db, embedder=embedder)
    stream = sys.stdin.buffer if source == "-" else _open(source)
    items, chunks, errors = _read(stream, h)
    active = [m for _, m in items if m.status == "active"]
    vectors = dict(zip((id(m) for m in active), h.embed([m.text for m in active])))
    chunk_vectors = transfer.prepare_chunks(h, chunks)
    with h.db.transaction():  # ids are checked under the write lock (`hippo.memory.screen`)
        taken = set(h.db.memories.held(m.id for _, m in items if m.id is not None))
        if taken:
            raise HippoError(f"{len(taken)} ids already exist (e.g. {min(taken)}); "
                             "import restores into an empty database")
        held = transfer.taken_chunks(h.db, chunks)
        if held:
            raise HippoError(f"{len(held)} Echo chunk ids already exist (e.g. {held[0]}); "
                             "import restores into an empty database")
        n_chunks = transfer.restore_chunks(h.db, chunks, chunk_vectors)
        mems = [m for _, m in screen(h.db, items, errors, taken_is_error=False)]
        h.db.memories.defer_references()
        ids = [brain.insert(h.db, m, vectors.get(id(m)), actor="import", action="import")["id"]
               for m in mems]
        transfer.link_sources(h.db, ids, [c.id for c in chunks])
        h.db.chunks.advance_ids()
    sys.stderr.write(f"hippo: imported {len(mems)} memories"
                     + (f" and {n_chunks} Echo chunks\n" if n_chunks else "\n"))
    if json:
        from hippo.console.output import write_json_lines

        write_json_lines([{"event": "summary", "job": "import", "imported": len(mems),
                           **({"chunks": n_chunks} if n_chunks else {}),
                           "errors": len(errors)}])
    for err in errors:
        sys.stderr.write(scrub(f"hippo: {err}\n"))
    if errors:
        raise typer.Exit(int(ExitCode.PARTIAL))


def _read(stream: Any, h: Any) -> tuple[list[Any], list[Any], list[str]]:
    """The lines of an export: memories (line, NewMemory), Echo chunks, and errors."""
    import orjson

    from hippo.memory.records import from_input
    from hippo.ops import transfer

    items, chunks, errors = [], [], []
    for lineno, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
            if isinstance(obj, dict) and transfer.is_chunk(obj):
                chunks.append(transfer.chunk_record(obj))
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), int):
                raise UsageError("an exported record needs an integer \"id\"")
            items.append((lineno, from_input(obj, h.types, default_project=None)))
        except (orjson.JSONDecodeError, UsageError) as exc:
            errors.append(f"line {lineno}: {exc}")
    return items, chunks, errors


def _open(path: str):  # type: ignore[no-untyped-def]
    try:
        return open(path, "rb")
    except OSError as exc:
        raise HippoError(f"cannot read {path}: {exc.strerror}") from None
