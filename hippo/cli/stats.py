"""`hippo stats`: counts per store, type, tier, status and author; size; model; jobs."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, open_hippo

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def stats(
    ctx: typer.Context,
    layers: Annotated[bool, typer.Option(
        "--layers/--no-layers", help="Token size of each layer (rule floor, guidance, curated, "
        "echo) for the current project; loads the tokenizer.")] = True,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show what is in the database and how healthy it is.

    \b
    Examples:
      hippo stats --no-layers
      hippo stats --json | jq .echo
    """
    from hippo.console.output import want_json, write_json_lines
    from hippo.ops.overview import collect

    h = open_hippo(ctx, db=db, project=project, read=True)
    data = collect(h.db)
    if layers:
        from hippo.layers import layer_sizes

        data["layers"] = layer_sizes(h.db, h.project, echo=False)
    if want_json(json):
        write_json_lines([data])
        return
    render(data)


def render(data: dict[str, Any]) -> None:
    """The stats at a terminal: the top-level values, then one section per group, each
    a two-column table whose values wrap (a nested group reads `key: value, ...`)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    top = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
    top.add_column("field", style="bold", no_wrap=True)
    top.add_column("value", overflow="fold")
    groups = []
    for key, value in data.items():
        if isinstance(value, dict) or (isinstance(value, list) and value
                                       and isinstance(value[0], dict)):
            groups.append((key, value))
        else:
            top.add_row(key, _value(value))
    console.print(top)
    for key, value in groups:
        t = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False,
                  title=key, title_justify="left", title_style="bold")
        t.add_column("field", no_wrap=True)
        t.add_column("value", overflow="fold")
        items = value.items() if isinstance(value, dict) else enumerate(value, start=1)
        for name, item in items:
            t.add_row(f"  {name}", _value(item))
        if not t.row_count:
            t.add_row("  (none)", "")
        console.print()
        console.print(t)


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) or "-"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:,}"
    text = str(value)
    if STAMP.fullmatch(text):  # to the second, and never cut in two
        return text[:19] + "Z"
    return text
