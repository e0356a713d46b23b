"""`hippo search`: the Typer command, its options built from the one table of them
(`hippo.cli.search_options`). The body is `hippo.cli.search_run.run`, which the Typer-free
fast path (`hippo.cli.fastpath`) calls too."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from hippo.cli import common
from hippo.cli.common import environment, root_flags
from hippo.cli.search_options import OPTIONS

# The Python type of each kind of option (`hippo.cli.search_options`).
TYPES: dict[str, Any] = {"count": int | None, "many": list[str] | None, "text": str | None,
                         "flag": bool, "toggle": bool | None, "unit": float | None}
# The options shared with other commands, declared once in `hippo.cli.common`.
COMMON = {"project": common.ProjectOpt, "db": common.DbOpt, "embedder": common.EmbedderOpt,
          "json": common.JsonOpt, "wide": common.WideOpt}
QueryArg = Annotated[str, typer.Argument(help="What to look for (free text; - reads stdin). "
                                         "Put -- before a query that starts with -.")]


def _annotation(dest: str, names: tuple[str, ...], kind: str, default: object,
                help: str | None) -> Any:
    """The Typer declaration of one option of the table."""
    if help is None:
        return COMMON[dest]
    settings: dict[str, Any] = {"help": help}
    if default is None:
        settings["show_default"] = False
    if kind == "count":
        settings["min"] = 1
    elif kind == "unit":
        settings.update(min=0.0, max=1.0)
    decls = ("/".join(names),) if kind == "toggle" else names
    kind_type = int if kind == "count" and default is not None else TYPES[kind]
    return Annotated[kind_type, typer.Option(*decls, **settings)]


def search(ctx: typer.Context, query: str, **options: Any) -> None:
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

    db = options.get("db")
    run(root_flags(ctx), query, env=environment(ctx),
        **{**options, "db": str(db) if db else None})


_P = inspect.Parameter
search.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [_P("ctx", _P.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
     _P("query", _P.POSITIONAL_OR_KEYWORD, annotation=QueryArg)]
    + [_P(dest, _P.POSITIONAL_OR_KEYWORD, default=default,
          annotation=_annotation(dest, names, kind, default, help))
       for dest, names, kind, default, help in OPTIONS],
    return_annotation=None)
