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
    from hippo.output import emit
    from hippo.records import from_input

    h = open_hippo(ctx, db=db, project=project, embedder=embedder)
    default_project = None if global_ else h.project
    if text != "-":
        fields: dict[str, object] = {"text": text}
        for key, value in (("type", type_), ("tier", tier), ("tags", tag),
                           ("importance", importance), ("author", author)):
            if value is not None:
                fields[key] = value
        if pin:
            fields["pinned"] = True
        mems = [from_input(fields, h.types, default_project=default_project)]
        errors: list[str] = []
    else:
        mems, errors = _read_stdin(h, default_project, type_, tag)
        if errors and atomic:
            raise HippoError(f"{errors[0]}; nothing stored (--atomic)"
                             + (f", {len(errors) - 1} more bad lines" if len(errors) > 1 else ""))
    changes = h.add(mems) if mems else []
    emit(({"id": c.record["id"], "action": c.action, **{k: c.record[k] for k in
           ("type", "project", "text")}} for c in changes), json_flag=json, columns=COLUMNS)
    for err in errors:
        sys.stderr.write(scrub(f"hippo: {err}\n"))
    if errors:
        sys.stderr.write(f"hippo: stored {len(changes)}, skipped {len(errors)} bad lines\n")
        raise typer.Exit(int(ExitCode.PARTIAL))


def _read_stdin(h: object, default_project: str | None, type_: str | None,
                tag: list[str] | None) -> tuple[list, list[str]]:
    import orjson

    from hippo.records import from_input

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
    mems = _check_ids(h, items, errors)
    errors.sort(key=lambda e: int(e.split(":", 1)[0].removeprefix("line ")))
    return mems, errors


REFS = ("consolidated_into", "superseded_by")
KNOWN_IDS = ("SELECT id, dedup_key FROM memories WHERE id IN "
             "(SELECT value FROM json_each(?))")


def _check_ids(h: Any, items: list[tuple[int, Any]], errors: list[str]) -> list[Any]:
    """Ids the database would refuse (taken, repeated, references to nothing) become
    per-line errors, so one such line skips itself instead of failing the batch."""
    import orjson

    wanted = {m.id for _, m in items if m.id} | {
        getattr(m, f) for _, m in items for f in REFS if getattr(m, f)}
    existing = dict(h.db.execute(KNOWN_IDS, (orjson.dumps(sorted(wanted)).decode(),))
                    ) if wanted else {}
    kept, seen = [], set()
    for lineno, m in items:
        if m.id is not None and m.id in seen:
            errors.append(f"line {lineno}: id {m.id} appears twice in the input")
        elif m.id is not None and existing.get(m.id, m.dedup_key) != m.dedup_key:
            errors.append(f"line {lineno}: id {m.id} is taken by another memory")
        else:
            seen.add(m.id)
            kept.append((lineno, m))
    while True:  # dropping a line may leave another one pointing at nothing
        ids = set(existing) | {m.id for _, m in kept if m.id}
        bad = {lineno: f for lineno, m in kept for f in REFS
               if getattr(m, f) and getattr(m, f) not in ids}
        if not bad:
            return [m for _, m in kept]
        for lineno, m in kept:
            if lineno in bad:
                errors.append(f"line {lineno}: {bad[lineno]} {getattr(m, bad[lineno])} is not "
                              "a memory in the database or in this input")
        kept = [(lineno, m) for lineno, m in kept if lineno not in bad]
