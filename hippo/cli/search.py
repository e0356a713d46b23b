"""`hippo search`: its options and help. The body is `hippo.cli.search_run.run`, which the
Typer-free fast path (`hippo.cli.fastpath`) calls too."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo.cli.common import DbOpt, EmbedderOpt, JsonOpt, ProjectOpt, WideOpt, root_flags


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
    min_score: Annotated[float | None, typer.Option(
        "--min-score", min=0.0, max=1.0, show_default=False,
        help="Leave out results scoring below this (scores compare across queries; "
             "0.3 keeps what has some relevance). Default 0, but 0.3 for --format "
             "markdown, as the prompt hook.")] = None,
    project: ProjectOpt = None,
    db: DbOpt = None,
    embedder: EmbedderOpt = None,
    json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Search memories: keywords and meaning together, best first.

    Looks at the current project and global memories (--project, --all-projects).
    Degradations (no embedder, no full-text index, reranker down) still give results;
    each is named on stderr and in every result's "degraded". When nothing matches, stderr
    says where memories are instead (other projects; Echo, when the Brain is empty).

    \b
    Examples:
      hippo search "how do we deploy staging"
      hippo search "release checklist" --type procedure --since 30d --wide
      hippo search --format markdown --budget 600 "$PROMPT"   # for an agent's prompt
      hippo search --json "redis cache" | jq -r .text
    """
    from hippo.cli.search_run import run

    run(root_flags(ctx), query, limit=limit, type_=type_, tier=tier, tag=tag, since=since,
        until=until, all_projects=all_projects, include_superseded=include_superseded,
        explain=explain, rerank=rerank, format_=format_, budget=budget,
        min_score=min_score, project=project, db=str(db) if db else None,
        embedder=embedder, json=json, wide=wide)
