"""`hippo show`: the full record of memories, with provenance and audit history."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo, parse_ids


def show(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
    history: Annotated[bool, typer.Option(help="Include the audit history.")] = True,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show memories: every field, where each came from, and what changed it."""
    from hippo import audit, brain
    from hippo.output import want_json, write_json_lines

    h = open_hippo(ctx, db=db, read=True)
    out = []
    for memory_id in parse_ids(ids):
        rec = brain.get(h.db, memory_id)
        rec["provenance"] = brain.sources(h.db, memory_id)
        if history:
            rec["history"] = audit.history(h.db, memory_id)
        out.append(rec)
    if want_json(json):
        write_json_lines(out)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for rec in out:
        t = Table(show_header=False, title=f"memory {rec['id']}", title_justify="left")
        t.add_column("field", style="bold")
        t.add_column("value", overflow="fold")
        for key, value in rec.items():
            if key in ("provenance", "history"):
                continue
            t.add_row(key, "" if value is None else str(value))
        console.print(t)
        for src in rec["provenance"]:
            console.print(f"  source chunk {src['chunk_id']}: {src['source_path']} "
                          f"lines {src['line_start']}-{src['line_end']} ({src['session_key']})")
            if src.get("text"):
                console.print("    " + src["text"][:400].replace("\n", "\n    "))
        for ev in rec.get("history", []):
            console.print(f"  {ev['at']}  {ev['action']:<12} by {ev['actor']}"
                          + (f"  run {ev['run_id']}" if ev["run_id"] else ""))
