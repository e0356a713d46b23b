"""`hippo guidance`: the procedures, tools and config of a route (project and/or topics)."""

# No `from __future__ import annotations`: Typer would eval every string annotation
# (twice) at each start; real annotations cost nothing.
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, open_hippo
from hippo.cli.context import AllProjectsOpt, TopicOpt, emit_layers


def guidance(
    ctx: typer.Context,
    topic: TopicOpt = None,
    budget: Annotated[int, typer.Option("--budget", "-b", min=0,
                                        help="Token budget (shipped tokenizer).")] = 1500,
    all_projects: AllProjectsOpt = False,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print the domain guidance of a route: procedural memories of the project and global ones.

    Procedures, tools, config and any other procedural-tier memory except rules (those are
    `hippo context`); with --topic, only those tagged with one of the topics. Same order,
    budget and output as `hippo context`.
    """
    from hippo.app.context import guidance as layer

    h = open_hippo(ctx, db=db, project=project, read=True)
    packed = layer(h, budget=budget, topics=topic or (), every=all_projects)
    emit_layers([packed], json_flag=json, env=h.env)
