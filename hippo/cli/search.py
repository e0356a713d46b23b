"""`hippo search`: the Brain search pipeline (`hippo.retrieve.pipeline.search`) on the command line."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, open_hippo, read_text_arg
from hippo.errors import UsageError

FORMATS = ("table", "json", "markdown")
COLUMNS = ("id", "score", "type", "project", "date", "importance", "tags", "text")
EXPLAIN_COLUMNS = ("id", "score", "bm25", "vector", "fused", "mmr", "fresh", "rerank", "text")


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (free text; - reads stdin). "
                                         "Put -- before a query that starts with -.")],
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, show_default=False,
                                              help="At most this many results (default 5).")
                     ] = None,
    type_: Annotated[list[str] | None, typer.Option("--type", "-t", help="Only this type; "
                                                    "repeatable.")] = None,
    tier: Annotated[list[str] | None, typer.Option(help="Only this tier; repeatable.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Must carry this tag; "
                                                  "repeatable, all must match.")] = None,
    since: Annotated[str | None, typer.Option(help="Created at or after: ISO date or 7d, "
                                              "12h.")] = None,
    until: Annotated[str | None, typer.Option(help="Created at or before: ISO date or 7d, "
                                              "12h.")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects", help="Every project, not "
                                               "just the current one and global.")] = False,
    include_superseded: Annotated[bool, typer.Option(
        "--include-superseded", help="Also superseded memories (their superseded_by is set).")
    ] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Add every stage's rank and "
                                          "score to each result.")] = False,
    rerank: Annotated[bool | None, typer.Option(
        "--rerank/--no-rerank", show_default=False,
        help="Rerank with Voyage (needs VOYAGE_API_KEY; default: the rerank setting).")
    ] = None,
    format_: Annotated[str | None, typer.Option(
        "--format", "-f", show_default=False,
        help="table, json or markdown (default: table at a terminal, else json).")] = None,
    budget: Annotated[int, typer.Option("--budget", "-b", min=1,
                                        help="Token budget of --format markdown.")] = 800,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
) -> None:
    """Search memories: keywords and meaning together, best first.

    Looks at the current project and global memories (--project, --all-projects).
    Degradations (no embedder, no full-text index, reranker down) still give results;
    each is named on stderr and in every result's "degraded".
    """
    from hippo.output import want_json
    from hippo.retrieve.pipeline import search as run

    if format_ is not None and format_ not in FORMATS:
        raise UsageError(f"unknown format {format_!r}; choose {', '.join(FORMATS)}")
    text = read_text_arg(query)
    h = open_hippo(ctx, db=db, project=project, embedder=embedder)
    found = run(h, text, limit=limit, types=type_ or (), tiers=tier or (), tags=tag or (),
                since=since, until=until, projects=None if all_projects else ...,
                include_superseded=include_superseded, explain=explain, rerank=rerank)
    for note in found.degraded:
        sys.stderr.write(f"hippo: degraded: {note}\n")
    if not found.results:
        return
    if format_ == "markdown" and not json:
        _markdown(found.results, budget)
    elif json or format_ == "json" or (format_ is None and want_json(False)):
        from hippo.output import write_json_lines

        write_json_lines(found.results)
    else:
        _table(found.results, explain)


def _markdown(results: list[dict[str, Any]], budget: int) -> None:
    from hippo.retrieve.render import markdown

    out = markdown(results, budget)
    if out.text:
        sys.stdout.write(out.text)
        sys.stdout.flush()
    if out.omitted or out.truncated:
        cut = " (first one cut to fit)" if out.truncated else ""
        ids = " ".join(f"#{i}" for i in out.omitted)
        left = f", left out {len(out.omitted)}: {ids}" if out.omitted else ""
        sys.stderr.write(f"hippo: {out.tokens}/{budget} tokens printed{cut}{left}\n")


def _rank(stage: dict[str, Any] | None) -> str:
    return "" if not stage else f"#{stage['rank']}"


def _table(results: list[dict[str, Any]], explain: bool) -> None:
    from hippo.output import table

    rows = []
    for r in results:
        row = {**r, "date": str(r["created_at"])[:10], "project": r["project"] or "global"}
        if r.get("superseded_by"):
            row["text"] = f"{r['text']} (superseded by #{r['superseded_by']})"
        if explain:
            e = r["explain"]
            vector = e["vector"]
            row.update(
                bm25=_rank(e["bm25"]),
                vector=f"#{vector['rank']} d={vector['distance']:.3f}" if vector else "",
                fused=e["fused"]["score"], mmr=_rank(e["mmr"]), fresh=e["freshness"]["value"],
                rerank=_rank(e["rerank"]),
            )
        rows.append(row)
    table(rows, EXPLAIN_COLUMNS if explain else COLUMNS)
