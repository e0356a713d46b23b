"""`hippo reindex --embedder X`: re-embed a store with another model, resumably."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo, root_flags
from hippo.cli.consolidate import DryRunOpt
from hippo.errors import UsageError


def reindex(
    ctx: typer.Context,
    embedder: Annotated[str | None, typer.Option("--embedder", help="The model to move to: "
                                                 "local, openai, hash.",
                                                 show_default=False)] = None,
    store: Annotated[str, typer.Option(help="brain (memories) or echo (transcript chunks).")]
    = "brain",
    batch: Annotated[int, typer.Option(min=1, help="Rows embedded and committed at a time.")]
    = 256,
    force: Annotated[bool, typer.Option("--force", help="Re-embed even when the store "
                                        "already uses this model.")] = False,
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Re-embed a store; old vectors serve searches until the new set is complete."""
    from hippo.cli.jobout import JobOutput
    from hippo.maintain import reindex as job

    name = embedder or root_flags(ctx).get("embedder")
    if not name:
        raise UsageError("say which model to move to: hippo reindex --embedder NAME")
    h = open_hippo(ctx, db=db)
    job.run(h, store, name, batch=batch, force=force, dry_run=dry_run,
            on_event=JobOutput(json).any)
