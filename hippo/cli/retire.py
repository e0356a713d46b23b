"""`hippo retire`: retire done tasks and tasks/todos/observations past their window."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo
from hippo.cli.consolidate import DryRunOpt


def retire(
    ctx: typer.Context,
    now: Annotated[str | None, typer.Option(help="Judge ages as of this ISO-8601 time "
                                            "(default: now), e.g. to preview next week.",
                                            show_default=False)] = None,
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Retire done memories and episodic ones past their window, unless pinned or canonical.

    At a terminal: a line per memory retired and a summary; JSON lines when piped or with
    --json. `hippo undo RUN_ID` puts them back.

    \b
    Examples:
      hippo retire --dry-run --now 2027-01-01
    """
    from hippo import timeutil
    from hippo.cli.jobout import JobOutput
    from hippo.maintain import retire as job
    from hippo.maintain.settings import MaintainParams

    h = open_hippo(ctx, db=db)
    params = MaintainParams.from_table(h.settings.table("maintain"))
    when = timeutil.parse(now) if now else timeutil.now()
    job.run(h, params, now=when, dry_run=dry_run, on_event=JobOutput(json).any)
