"""`hippo export` and `hippo import`: SPEC records as JSON lines, restorable exactly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, open_hippo
from hippo.errors import ExitCode, HippoError, UsageError, scrub


def export(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(help="brain (memories) or echo (transcript chunks).")]
    = "brain",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file "
                                                "instead of stdout.")] = None,
    db: DbOpt = None,
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
) -> None:
    """Import an export exactly (ids, timestamps, authorship, status, provenance)."""
    import orjson

    from hippo import brain
    from hippo.records import from_input

    h = open_hippo(ctx, db=db, embedder=embedder)
    stream = sys.stdin.buffer if source == "-" else _open(source)
    mems, errors = [], []
    for lineno, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), int):
                raise UsageError("an exported record needs an integer \"id\"")
            mems.append(from_input(obj, h.types, default_project=None))
        except (orjson.JSONDecodeError, UsageError) as exc:
            errors.append(f"line {lineno}: {exc}")
    taken: set[int] = {m.id for m in mems if m.id is not None} & {
        r[0] for r in h.db.execute("SELECT id FROM memories")
    }
    if taken:
        raise HippoError(f"{len(taken)} ids already exist (e.g. {min(taken)}); "
                         "import restores into an empty database")
    active = [m for m in mems if m.status == "active"]
    vectors = dict(zip((id(m) for m in active), h.embed([m.text for m in active])))
    with h.db.transaction():
        h.db.execute("PRAGMA defer_foreign_keys = ON")
        for m in mems:
            brain.insert(h.db, m, vectors.get(id(m)), actor="import", action="import")
    sys.stderr.write(f"hippo: imported {len(mems)} memories\n")
    for err in errors:
        sys.stderr.write(scrub(f"hippo: {err}\n"))
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
