"""`hippo doctor`: integrity of the database, its indexes, vectors and watermarks."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode


def doctor(
    ctx: typer.Context,
    fix: Annotated[bool, typer.Option("--fix", help="Repair what can be repaired (rebuild FTS, "
                                      "re-embed missing vectors) and say what changed.")] = False,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Check the database; exit 1 when a problem remains (after --fix, if given)."""
    from hippo import doctor as doc
    from hippo.output import emit

    h = open_hippo(ctx, db=db, embedder=embedder)
    checks = doc.run(h, fix=fix)
    emit([c.record() for c in checks], json_flag=json, columns=("check", "ok", "detail", "fixed"))
    if any(not c.ok and not c.fixed for c in checks):
        raise typer.Exit(int(ExitCode.ERROR))
