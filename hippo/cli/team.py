"""`hippo team init|add-member`: a team store on PostgreSQL whose privacy the server enforces."""

# No `from __future__ import annotations`: Typer would eval every string annotation.
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, handled, open_hippo

TeamOpt = Annotated[str, typer.Option(
    "--team", help="The team's name: its roles are NAME (the grants) and NAME_owner (owns "
    "the tables), its schema NAME unless --schema says.")]


def team() -> None:
    """Set up a team store on PostgreSQL: per-member roles, row-level security (admin).

    Run with an administrator's URL (a superuser, or a role with CREATEROLE and CREATE on
    the database). Each member then connects as their own role: their Echo is theirs alone,
    the Brain is the team's (docs/postgres.md, "A team store").
    """


GROUP = typer.Typer(name="team", callback=team, no_args_is_help=True,
                    add_completion=False, rich_markup_mode=None,
                    context_settings={"help_option_names": ["-h", "--help"]})


def _url(ctx: typer.Context, db: str | None) -> str:
    return str(open_hippo(ctx, db=db).settings.database)


def _emit(record: dict[str, Any], json: bool) -> None:
    """One JSON line; at a terminal, `field: value` lines (whole: a password or URL is
    never cut to a column's width)."""
    import sys

    from hippo.console.output import want_json, write_json_lines

    if want_json(json):
        write_json_lines([record])
        return
    for key, value in record.items():
        if value not in (None, [], ""):
            shown = ", ".join(value) if isinstance(value, list) else value
            sys.stdout.write(f"{key}: {shown}\n")


@GROUP.command("init")
@handled
def init(
    ctx: typer.Context,
    team_name: TeamOpt = "hippo_team",
    schema: Annotated[str | None, typer.Option(
        "--schema", help="The store's schema (default: the team's name).",
        show_default=False)] = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Create the team's roles, its schema with hippo's tables, grants and policies.

    Run again after upgrading hippo: it applies the new schema steps (members may not) and
    re-applies the policies. A schema holding a store made without it is refused.
    """
    from hippo.app.stores import team as team_store

    url = _url(ctx, db)
    _emit(team_store(url).init(url, team_name, schema), json)


@GROUP.command("add-member")
@handled
def add_member(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The member's role (a person "
                                        "or an agent host).", show_default=False)],
    team_name: TeamOpt = "hippo_team",
    no_password: Annotated[bool, typer.Option(
        "--no-password", help="Set no password (the server authenticates the role "
        "otherwise: certificates, GSSAPI, peer).")] = False,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Create the member's role in the team (or add an existing role) and print what they
    need: the URL, a new password (shown once) and its ~/.pgpass line."""
    from hippo.app.stores import team as team_store

    url = _url(ctx, db)
    _emit(team_store(url).add_member(url, team_name, name, password=not no_password), json)
