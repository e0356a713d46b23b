"""`hippo forget`, `pin`, `unpin`: a person's changes to a memory's status, all audited."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo, parse_ids

COLUMNS = ("id", "status", "pinned", "text")


def _apply(ctx: typer.Context, ids: list[str], db: object, json: bool, action: str,
           changes: dict[str, object]) -> None:
    from hippo.app import memory
    from hippo.console.output import emit

    h = open_hippo(ctx, db=db)  # type: ignore[arg-type]
    emit(memory.change(h, parse_ids(ids), changes, action=action), json_flag=json,
         columns=COLUMNS)


def forget(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
    hard: Annotated[bool, typer.Option("--hard", help="Purge the text, its vectors and its "
                                       "audit text for good.")] = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Forget memories: soft delete (audited, restorable), or --hard purge."""
    if not hard:
        _apply(ctx, ids, db, json, "forget", {"status": "deleted"})
        return
    from hippo.app import memory
    from hippo.console.output import emit

    h = open_hippo(ctx, db=db)
    gone = memory.purge(h, parse_ids(ids))
    if not gone.checkpointed:
        import sys

        from hippo.cli.common import purge_left

        sys.stderr.write(purge_left(gone.label, gone.server))
    emit(gone.records, json_flag=json, columns=COLUMNS)


def pin(ctx: typer.Context, ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
        db: DbOpt = None, json: JsonOpt = False) -> None:
    """Pin memories: never retired or merged automatically.

    A pinned rule or preference loads in the rule floor even when a machine wrote it.
    """
    _apply(ctx, ids, db, json, "pin", {"pinned": True})


def unpin(ctx: typer.Context, ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
          db: DbOpt = None, json: JsonOpt = False) -> None:
    """Unpin memories."""
    _apply(ctx, ids, db, json, "unpin", {"pinned": False})
