"""`hippo stats`: counts per store, type, tier, status and author; size; model; jobs."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, open_hippo


def stats(
    ctx: typer.Context,
    layers: Annotated[bool, typer.Option(
        "--layers/--no-layers", help="Token size of each layer (rule floor, guidance, curated, "
        "echo) for the current project; loads the tokenizer.")] = True,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show what is in the database and how healthy it is."""
    from hippo.output import want_json, write_json_lines
    from hippo.stats import collect

    h = open_hippo(ctx, db=db, project=project, read=True)
    data = collect(h.db)
    if layers:
        from hippo.layers import layer_sizes

        data["layers"] = layer_sizes(h.db, h.project, echo=False)
    if want_json(json):
        write_json_lines([data])
        return
    from rich.console import Console
    from rich.pretty import Pretty

    Console().print(Pretty(data, expand_all=False))
