"""`hippo doctor`: integrity of the database, its indexes, vectors and watermarks."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, open_hippo
from hippo.errors import ExitCode


def doctor(
    ctx: typer.Context,
    fix: Annotated[bool, typer.Option("--fix", help="Repair what can be repaired (salvage a damaged "
                                      "file, rebuild FTS, re-embed missing vectors) and say "
                                      "what changed.")] = False,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Check the database; exit 1 when a problem remains (after --fix, if given).

    On a damaged file --fix salvages every readable row into a new file that takes its
    place (the damaged one is kept beside it) and exits 3 when some rows were lost."""
    from hippo import doctor as doc
    from hippo.output import emit

    h = open_hippo(ctx, db=db, embedder=embedder, read=True)  # --fix reopens it to write
    checks = doc.run(h, fix=fix)
    emit([c.record() for c in checks], json_flag=json, columns=("check", "ok", "detail", "fixed"))
    lost = [p for c in checks for p in c.data.get("problems", ())]
    for problem in lost:
        sys.stderr.write(f"hippo: salvage: {problem}\n")
    if any(not c.ok and not c.fixed for c in checks):
        raise typer.Exit(int(ExitCode.ERROR))
    if lost:  # repaired, but some rows could not be read back: each is reported above
        raise typer.Exit(int(ExitCode.PARTIAL))
