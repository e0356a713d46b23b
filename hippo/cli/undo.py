"""`hippo undo RUN_ID`: restore what one run changed, exactly, from the audit log."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, open_hippo
from hippo.cli.consolidate import DryRunOpt


def undo(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to undo (its summary line's run_id; "
                                          "`hippo stats` shows each job's last run).")],
    force: Annotated[bool, typer.Option("--force", help="Also overwrite memories changed "
                                        "after that run.")] = False,
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
) -> None:
    """Undo a run: text, status, links, vectors and FTS back as they were; itself audited."""
    from hippo.maintain import undo as job
    from hippo.output import write_json_lines

    h = open_hippo(ctx, db=db)
    job.run(h, run_id, force=force, dry_run=dry_run, on_event=lambda ev: write_json_lines([ev]))
