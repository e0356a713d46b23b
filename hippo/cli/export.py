"""`hippo export` and `hippo import`: SPEC records as JSON lines, restorable exactly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode, HippoError, UsageError


def export(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(help="brain (memories) or echo (transcript chunks).")]
    = "brain",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file "
                                                "instead of stdout.")] = None,
    db: DbOpt = None,
    json: JsonOpt = False,  # accepted everywhere: the export is JSON lines either way
) -> None:
    """Export every memory (all statuses) or every Echo chunk as JSON lines, in id order."""
    from hippo import brain, echo_export
    from hippo.output import dumps

    if store not in ("brain", "echo"):
        raise UsageError(f"unknown store {store!r}; choose brain or echo")
    h = open_hippo(ctx, db=db)
    rows = brain.export_rows(h.db) if store == "brain" else echo_export.rows(h.db)
    out = _private(output) if output else sys.stdout.buffer
    try:
        for rec in rows:
            out.write(dumps(rec))
    finally:
        if output:
            out.close()
        else:
            out.flush()


def import_(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="An export file, or - for stdin.")] = "-",
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Import an export exactly (ids, timestamps, authorship, status, provenance).

    With --json, a summary line on stdout too (`{"event": "summary", "imported": N, ...}`)."""
    import orjson

    from hippo import brain
    from hippo.records import from_input
    from hippo.screen import screen

    h = open_hippo(ctx, db=db, embedder=embedder)
    stream = sys.stdin.buffer if source == "-" else _open(source)
    items, errors = [], []
    for lineno, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), int):
                raise UsageError("an exported record needs an integer \"id\"")
            items.append((lineno, from_input(obj, h.types, default_project=None)))
        except (orjson.JSONDecodeError, UsageError) as exc:
            errors.append(f"line {lineno}: {exc}")
    active = [m for _, m in items if m.status == "active"]
    vectors = dict(zip((id(m) for m in active), h.embed([m.text for m in active])))
    with h.db.transaction():  # ids are checked under the write lock (`hippo.screen`)
        taken: set[int] = {m.id for _, m in items if m.id is not None} & {
            r[0] for r in h.db.execute("SELECT id FROM memories")
        }
        if taken:
            raise HippoError(f"{len(taken)} ids already exist (e.g. {min(taken)}); "
                             "import restores into an empty database")
        mems = [m for _, m in screen(h.db, items, errors, taken_is_error=False)]
        h.db.execute("PRAGMA defer_foreign_keys = ON")
        for m in mems:
            brain.insert(h.db, m, vectors.get(id(m)), actor="import", action="import")
    sys.stderr.write(f"hippo: imported {len(mems)} memories\n")
    if json:
        from hippo.output import write_json_lines

        write_json_lines([{"event": "summary", "job": "import", "imported": len(mems),
                           "errors": len(errors)}])
    for err in errors:
        sys.stderr.write(f"hippo: {err}\n")
    if errors:
        raise typer.Exit(int(ExitCode.PARTIAL))


def _private(path: Path):  # type: ignore[no-untyped-def]
    """Open an export file for writing, user-only like the database it copies."""
    import os

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        raise HippoError(f"cannot write {path}: {exc.strerror}") from None
    return os.fdopen(fd, "wb")


def _open(path: str):  # type: ignore[no-untyped-def]
    try:
        return open(path, "rb")
    except OSError as exc:
        raise HippoError(f"cannot read {path}: {exc.strerror}") from None
