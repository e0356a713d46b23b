"""`hippo consolidate`: merge near-duplicate machine memories (nightly job)."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print what would change (JSON "
                                         "lines) and write nothing.")]


def consolidate(
    ctx: typer.Context,
    threshold: Annotated[float | None, typer.Option(
        min=0.0, max=1.0, help="Cosine at or above which memories merge (default 0.93, "
        "[maintain] threshold).", show_default=False)] = None,
    full: Annotated[bool, typer.Option("--full", help="Compare every pair, not only "
                                       "memories changed since the last run.")] = False,
    merger: Annotated[str | None, typer.Option(
        help="Who writes the merged statement: rules (the most complete member, default) or "
        "llm (the chat model of hippo extract --extractor llm, checked against the members' "
        "literals); config: [maintain] merger.", show_default=False)] = None,
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Merge near-duplicate machine memories of one type and project; JSON line per event.

    At a terminal: a line per merge and a readable summary; JSON lines when piped or with
    --json. Every change is audited with the run id: `hippo undo RUN_ID` reverts it.

    \b
    Examples:
      hippo consolidate --dry-run
      hippo consolidate --json | jq 'select(.event == "merge")'
    """
    from hippo.cli.jobout import JobOutput
    from hippo.errors import UsageError
    from hippo.maintain import consolidate as job
    from hippo.maintain.settings import MERGERS, MaintainParams

    if merger is not None and merger not in MERGERS:
        raise UsageError(f"unknown merger {merger!r}; known: {', '.join(sorted(MERGERS))}")
    h = open_hippo(ctx, db=db)
    params = MaintainParams.from_table(h.settings.table("maintain"), threshold=threshold,
                                       merger=merger)
    job.run(h, params, full=full, dry_run=dry_run, on_event=JobOutput(json).any)
