"""`hippo add`: store a memory, or many from JSON lines on stdin (`hippo add -`)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, open_hippo
from hippo.errors import ExitCode, HippoError, UsageError, scrub

COLUMNS = ("id", "action", "type", "project", "text")


def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The memory text, or - to read JSON lines "
                                        "(one SPEC record per line) from stdin.")],
    type_: Annotated[str | None, typer.Option("--type", "-t", help="Memory type "
                                              "(rule, decision, fact, task, ...).")] = None,
    tier: Annotated[str | None, typer.Option(help="procedural, semantic or episodic "
                                             "(default: by type).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag; repeatable.")] = None,
    importance: Annotated[float | None, typer.Option(help="0..1 (default 0.5).")] = None,
    author: Annotated[str | None, typer.Option(help="human (default) or machine.")] = None,
    pin: Annotated[bool, typer.Option("--pin", help="Pin it (never retired).")] = False,
    global_: Annotated[bool, typer.Option("--global", help="Store it for every project.")] = False,
    atomic: Annotated[bool, typer.Option(help="With -: store nothing if any line is bad.")] = False,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Add a memory. Re-adding the same statement reinforces the existing one."""
    from hippo.console.output import emit

    h = open_hippo(ctx, db=db, project=project, embedder=embedder)
    errors: list[str] = []
    if text != "-":
        from hippo.app.remember import remember

        changes = [remember(h, text, type_=type_, tier=tier, tags=tag, importance=importance,
                            author=author, pinned=pin, global_=global_).change]
    else:
        items, errors = _read_stdin(h, None if global_ else h.project, type_, tag)
        mems = [m for _, m in items]
        changes = h.add(mems, screen=_screen(items, errors, atomic)) if mems else []
    if errors and atomic and not changes:
        _refuse_atomic(errors)
    emit(({"id": c.record["id"], "action": c.action, **{k: c.record[k] for k in
           ("type", "project", "text")}} for c in changes), json_flag=json, columns=COLUMNS)
    for err in errors:
        sys.stderr.write(scrub(f"hippo: {err}\n"))
    if errors:
        sys.stderr.write(f"hippo: stored {len(changes)}, skipped {len(errors)} bad lines\n")
        raise typer.Exit(int(ExitCode.PARTIAL))


def _refuse_atomic(errors: list[str]) -> None:
    raise HippoError(f"{errors[0]}; nothing stored (--atomic)"
                     + (f", {len(errors) - 1} more bad lines" if len(errors) > 1 else ""))


def _screen(items: list[tuple[int, Any]], errors: list[str], atomic: bool) -> Any:
    """The lines to store, chosen under the write lock (`hippo.memory.screen`); with --atomic any
    refused line stores nothing (the transaction rolls back)."""
    from hippo.memory.screen import screen

    def keep(db: Any, mems: Any) -> list[int]:
        kept = {lineno for lineno, _ in screen(db, items, errors)}
        if errors and atomic:
            _refuse_atomic(errors)
        return [i for i, (lineno, _) in enumerate(items) if lineno in kept]

    return keep


def _read_stdin(h: object, default_project: str | None, type_: str | None,
                tag: list[str] | None) -> tuple[list[tuple[int, Any]], list[str]]:
    import orjson

    from hippo.memory.records import from_input

    items, errors = [], []
    data = sys.stdin.buffer
    for lineno, raw in enumerate(data, start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            errors.append(f"line {lineno}: not valid JSON ({str(exc).split(':')[0]})")
            continue
        if isinstance(obj, dict):
            if type_ and "type" not in obj:
                obj["type"] = type_
            if tag and "tags" not in obj:
                obj["tags"] = tag
        try:
            items.append((lineno, from_input(obj, h.types,  # type: ignore[attr-defined]
                                             default_project=default_project)))
        except UsageError as exc:
            errors.append(f"line {lineno}: {exc}")
    return items, errors
