"""The Typer app behind the `hippo` console script; its commands are thin modules in this package."""

from __future__ import annotations

from typing import Annotated

import typer

from hippo import __version__
from hippo.cli.commands import LazyGroup
from hippo.cli.common import DbOpt, EmbedderOpt, ProjectOpt, environment

app = typer.Typer(
    name="hippo",
    cls=LazyGroup,
    help="Memory engine for AI coding agents: curated Brain memories and an Echo "
    "transcript archive in one local SQLite file.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(ctx: typer.Context, value: bool) -> None:
    if value:
        environment(ctx).stdout.write(f"hippo {__version__}\n")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: DbOpt = None,
    project: ProjectOpt = None,
    embedder: EmbedderOpt = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True,
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """Memory engine for AI coding agents."""
    env = environment(ctx)  # the call's (`hippo.cli.main` gives it as the context's obj)
    if debug:
        env.set_debug()
    given = ctx.obj if isinstance(ctx.obj, dict) else {}
    ctx.obj = {"db": str(db) if db else None, "project": project, "embedder": embedder,
               "env": env, "face": given.get("face")}


__all__ = ["app"]
