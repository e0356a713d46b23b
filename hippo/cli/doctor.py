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

    Also lists the agents `hippo setup` set up (user scope, and project scope here) and
    whether their hook and MCP commands still resolve to an executable.

    On a damaged file --fix salvages every readable row into a new file that takes its
    place (the damaged one is kept beside it) and exits 3 when some rows were lost."""
    import os

    from hippo.console.output import emit
    from hippo.errors import NoDatabase
    from hippo.ops import doctor as doc
    from hippo.setup.status import checks as agent_checks

    try:
        h = open_hippo(ctx, db=db, embedder=embedder, read=True)  # --fix reopens to write
        checks = doc.run(h, fix=fix)
    except NoDatabase as exc:  # no store yet: the agents' setup is still worth checking
        sys.stderr.write(f"hippo: {exc}\n")
        checks = []
    first = checks[0] if checks else None
    if not (any(c.name == "schema" for c in checks)  # the store's early stops say only that
            or (first and first.data.get("damaged") and not first.fixed)):
        checks += agent_checks(os.getcwd())
    emit([c.record() for c in checks], json_flag=json, columns=("check", "ok", "detail", "fixed"))
    lost = [p for c in checks for p in c.data.get("problems", ())]
    for problem in lost:
        sys.stderr.write(f"hippo: salvage: {problem}\n")
    if any(not c.ok and not c.fixed for c in checks):
        raise typer.Exit(int(ExitCode.ERROR))
    if lost:  # repaired, but some rows could not be read back: each is reported above
        raise typer.Exit(int(ExitCode.PARTIAL))
