"""`hippo done`, `verify`, `edit`, `supersede`: a person's corrections, all audited."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo, parse_ids
from hippo.cli.plain import read_text_arg
from hippo.errors import UsageError

COLUMNS = ("id", "type", "status", "confirmed_at", "superseded_by", "text")
IdsArg = Annotated[list[str], typer.Argument(help="Memory ids.")]


def done(ctx: typer.Context, ids: IdsArg, db: DbOpt = None, json: JsonOpt = False) -> None:
    """Mark tasks/todos done: out of default search, kept until `hippo retire`."""
    from hippo.app import memory
    from hippo.console.output import emit

    h = open_hippo(ctx, db=db)
    emit(memory.done(h, parse_ids(ids)), json_flag=json, columns=COLUMNS)


def verify(ctx: typer.Context, ids: IdsArg, db: DbOpt = None, json: JsonOpt = False) -> None:
    """Confirm memories are still true: confirmed_at = now, so their freshness restarts.

    A person's review: verified_at = now too, and a rule or preference a machine wrote
    (extraction, an agent) may from now on load in the rule floor (`hippo context`).
    """
    from hippo.app import memory
    from hippo.console.output import emit

    h = open_hippo(ctx, db=db)
    emit(memory.verify(h, parse_ids(ids)), json_flag=json, columns=COLUMNS)


def edit(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="Memory id.")],
    text: Annotated[str | None, typer.Option(help="New statement (- reads stdin); re-embedded, "
                                             "and the memory becomes human-authored.",
                                             show_default=False)] = None,
    type_: Annotated[str | None, typer.Option("--type", "-t", help="New type.",
                                              show_default=False)] = None,
    tier: Annotated[str | None, typer.Option(help="procedural, semantic or episodic.",
                                             show_default=False)] = None,
    importance: Annotated[float | None, typer.Option(help="0..1.", show_default=False)] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Add a tag; repeatable.")]
    = None,
    untag: Annotated[list[str] | None, typer.Option("--untag", help="Remove a tag; "
                                                    "repeatable.")] = None,
    set_project: Annotated[str | None, typer.Option("--project", "-p", help="Move it to this "
                                                    "project.", show_default=False)] = None,
    global_: Annotated[bool, typer.Option("--global", help="Make it global (no project).")]
    = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Correct a memory's text, type, tier, importance, tags or project (audited)."""
    from hippo.console.output import emit
    from hippo.maintain import lifecycle

    (mid,) = parse_ids([memory_id])
    h = open_hippo(ctx, db=db)
    rec = lifecycle.edit(h, mid, text=read_text_arg(text) if text is not None else None,
                         type_=type_, tier=tier, importance=importance, add_tags=tag or [],
                         remove_tags=untag or [], project=set_project, global_=global_)
    emit([rec], json_flag=json, columns=COLUMNS)


def supersede(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="OLD", help="The memory that is out of date.")],
    by: Annotated[str | None, typer.Option("--by", metavar="NEW", help="The memory that "
                                           "replaces it.", show_default=False)] = None,
    clear: Annotated[bool, typer.Option("--clear", help="OLD is current again.")] = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Mark OLD as replaced by NEW: it leaves default search (see --include-superseded)."""
    from hippo.app import memory
    from hippo.console.output import emit

    if (by is None) == (not clear):
        raise UsageError("give --by NEW, or --clear")
    (old_id,) = parse_ids([old])
    new_id = parse_ids([by])[0] if by is not None else None
    h = open_hippo(ctx, db=db)
    emit([memory.supersede(h, old_id, new_id)], json_flag=json, columns=COLUMNS)
