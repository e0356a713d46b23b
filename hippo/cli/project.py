"""`hippo project list|rename|merge`: the projects in the database, and fixing their names."""

# No `from __future__ import annotations`: Typer would eval every string annotation.
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, handled, open_hippo
from hippo.cli.consolidate import DryRunOpt

COLUMNS = ("project", "active", "memories", "sessions", "chunks", "dirs")


def project() -> None:
    """List projects, rename one, or merge one into another (audited; `hippo undo` reverts).

    A project is the name of the git repository a command runs in (every worktree of it is
    one project); rename and merge fix what older hippos and typos left behind.
    """


GROUP = typer.Typer(name="project", callback=project, no_args_is_help=True,
                    add_completion=False, rich_markup_mode=None,
                    context_settings={"help_option_names": ["-h", "--help"]})


@GROUP.command("list")
@handled
def list_(ctx: typer.Context, db: DbOpt = None, json: JsonOpt = False) -> None:
    """List every project with its memories (active and all), sessions, chunks and recorded
    worktree directories; global memories are the row without a name."""
    from hippo.console.output import emit
    from hippo.maintain.projects import listing

    h = open_hippo(ctx, db=db)
    emit(listing(h.db), json_flag=json, columns=COLUMNS)


OldArg = Annotated[str, typer.Argument(metavar="OLD", help="The project to rename.",
                                       show_default=False)]


@GROUP.command("rename")
@handled
def rename(
    ctx: typer.Context,
    old: OldArg,
    new: Annotated[str, typer.Argument(metavar="NEW", help="Its new name (no project may have it yet).",
                                       show_default=False)],
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,  # the events are JSON lines either way
) -> None:
    """Rename project OLD to NEW: its memories, Echo sessions and chunks, recorded worktrees.

    Prints a JSON summary with the run id; `hippo undo RUN_ID` puts everything back. NEW
    must be a new name (to join an existing project, `hippo project merge`).
    """
    _run(ctx, old, new, merge=False, dry_run=dry_run, db=db)


@GROUP.command("merge")
@handled
def merge(
    ctx: typer.Context,
    from_: Annotated[str, typer.Argument(metavar="FROM", help="The project to merge away.",
                                         show_default=False)],
    into: Annotated[str, typer.Argument(metavar="INTO", help="The existing project that receives it.",
                                        show_default=False)],
    dry_run: DryRunOpt = False,
    db: DbOpt = None,
    json: JsonOpt = False,  # the events are JSON lines either way
) -> None:
    """Merge project FROM into INTO; a memory INTO already holds is folded into INTO's.

    Same statement (type and normalised text): INTO's memory is reinforced and FROM's copy
    becomes consolidated into it, as adding it to INTO would have done (a `fold` line each).
    Prints a JSON summary with the run id; `hippo undo RUN_ID` puts everything back.
    """
    _run(ctx, from_, into, merge=True, dry_run=dry_run, db=db)


def _run(ctx: typer.Context, src: str, dst: str, *, merge: bool, dry_run: bool,
         db: DbOpt) -> None:
    from hippo.console.output import write_json_lines
    from hippo.maintain import projects

    h = open_hippo(ctx, db=db)
    projects.run(h, src, dst, merge=merge, dry_run=dry_run,
                 on_event=lambda ev: write_json_lines([ev]))
