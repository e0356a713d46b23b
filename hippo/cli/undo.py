"""`hippo undo RUN_ID`: restore what one run changed, exactly, from the audit log."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo
from hippo.cli.consolidate import DryRunOpt


def undo(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to undo (its summary line's run_id; "
                                          "`hippo stats` shows each job's last run).")],
    force: Annotated[bool, typer.Option("--force", help="Also overwrite memories changed "
                                        "after that run.")] = False,
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Undo a run: text, status, links, vectors and FTS back as they were; itself audited.

    \b
    Examples:
      hippo undo consolidate-20261130T020000-1a2b3c --dry-run
      hippo undo undo-20261201T101500-4d5e6f     # undo the undo
    """
    from hippo.cli.jobout import JobOutput
    from hippo.maintain import undo as job

    h = open_hippo(ctx, db=db)
    job.run(h, run_id, force=force, dry_run=dry_run, on_event=JobOutput(json).any)
