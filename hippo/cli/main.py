"""The `hippo` console script: a Typer app whose commands are thin modules in this package."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from hippo import __version__
from hippo.cli.commands import LazyGroup
from hippo.cli.common import DbOpt, EmbedderOpt, ProjectOpt
from hippo.errors import ExitCode, HippoError, scrub

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


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"hippo {__version__}\n")
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
    if debug:
        os.environ["HIPPO_DEBUG"] = "1"
    ctx.obj = {"db": str(db) if db else None, "project": project, "embedder": embedder}



def main() -> None:
    """Entry point: run the app, turning hippo errors into one stderr line and an exit code."""
    debug = "--debug" in sys.argv[1:] or os.environ.get("HIPPO_DEBUG") == "1"
    try:
        app(prog_name="hippo")
    except HippoError as exc:
        if debug:
            _traceback()
        sys.stderr.write(scrub(f"hippo: {exc}\n"))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        sys.stderr.write("hippo: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # Downstream closed the pipe (e.g. `| head`): quiet, like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(int(ExitCode.OK))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, traceback on request
        if debug:
            _traceback()
            sys.exit(int(ExitCode.ERROR))
        name = type(exc).__name__
        sys.stderr.write(scrub(f"hippo: unexpected {name}: {exc} (rerun with --debug for a "
                               "traceback)\n"))
        sys.exit(int(ExitCode.ERROR))


def _traceback() -> None:
    """--debug: the traceback, with credentials a provider quoted back masked all the same."""
    import traceback

    sys.stderr.write(scrub(traceback.format_exc()))


__all__ = ["app", "main"]
