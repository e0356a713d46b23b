"""`hippo stats`: counts per store, type, tier, status and author; size; model; jobs."""

from __future__ import annotations

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo


def stats(ctx: typer.Context, db: DbOpt = None, json: JsonOpt = False) -> None:
    """Show what is in the database and how healthy it is."""
    from hippo.output import want_json, write_json_lines
    from hippo.stats import collect

    h = open_hippo(ctx, db=db)
    data = collect(h.db)
    if want_json(json):
        write_json_lines([data])
        return
    from rich.console import Console
    from rich.pretty import Pretty

    Console().print(Pretty(data, expand_all=False))
