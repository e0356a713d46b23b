"""`hippo config`: every effective setting and path, and where each came from; and the
settings a shared store keeps for its whole team (`--set`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.project import Location

SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="NAME=VALUE", show_default=False,
                 help="Change a setting the store keeps for every user of it (a PostgreSQL "
                 "store): echo.shared=on shows every user's Echo transcripts to the whole "
                 "team, echo.shared=off (the default) each user only their own. Repeatable."),
]
# The settings a shared store keeps in its `meta` table: name -> (allowed values, default).
STORE_SETTINGS = {"echo.shared": (("on", "off"), "off")}


def config(ctx: typer.Context, db: DbOpt = None, json: JsonOpt = False,
           set_: SetOpt = None) -> None:
    """Show effective settings and paths with their origin (flag, env, file, default).

    A PostgreSQL store shared by a team also keeps settings of its own, the same for every
    user (origin `store`): `echo.shared` (off by default: each user sees only the Echo
    transcripts they ingested; on: the whole team sees every user's). Change one with
    --set; anyone who may write to the store may, and it holds for everyone at once.

    Examples:
      hippo config
      hippo --db postgresql://team@db/hippo config --set echo.shared=on
    """
    from hippo import config as cfg
    from hippo.config import display
    from hippo.console.output import emit

    if set_:
        emit(_store_set(open_hippo(ctx, db=db), set_), json_flag=json,
             columns=("name", "value", "origin"))
        return
    h = open_hippo(ctx, db=db)
    s = h.settings
    # A server's URL may carry a password: shown without it, as everywhere.
    rows = [{"name": o.name, "value": display(s[o.name]) if o.name == "db" and s[o.name]
             else s[o.name], "origin": s.origins[o.name], "help": o.help}
            for o in cfg.OPTIONS]
    rows += [
        {"name": "path.home", "value": str(cfg.home_dir()), "origin":
            "env HIPPO_HOME" if "HIPPO_HOME" in __import__("os").environ else "platform",
         "help": "user data dir"},
        {"name": "path.config", "value": str(s.file), "origin":
            "exists" if s.file.exists() else "absent", "help": "config file"},
        {"name": "path.db", "value": display(s.database), "origin": s.origins["db"],
         "help": "database file or server"},
        {"name": "project.current", "value": h.project, "origin": s.origins["project"]
            if s["project"] else _detected(h.location), "help": "current project"},
    ]
    for table, values in sorted(s.tables.items()):
        rows.append({"name": f"[{table}]", "value": _masked(values), "origin": "file",
                     "help": ""})
    rows += _store_rows(ctx, db)
    emit(rows, json_flag=json, columns=("name", "value", "origin"))


def _parse(assignment: str) -> tuple[str, str]:
    """`NAME=VALUE` checked against `STORE_SETTINGS` (exit 2 naming what is allowed)."""
    from hippo.errors import UsageError

    name, eq, value = assignment.partition("=")
    name, value = name.strip(), value.strip().lower()
    if name not in STORE_SETTINGS:
        raise UsageError(f"--set {assignment!r}: not a store setting; known: "
                         + ", ".join(STORE_SETTINGS))
    allowed = STORE_SETTINGS[name][0]
    if not eq or value not in allowed:
        raise UsageError(f"--set {assignment!r}: {name} is one of " + ", ".join(allowed))
    return name, value


def _store_set(h: Hippo, assignments: list[str]) -> list[dict[str, Any]]:
    """Write the team's settings into the store, all or none."""
    from hippo.config import is_server
    from hippo.errors import UsageError

    values = dict(_parse(a) for a in assignments)
    if not is_server(h.settings.database):
        raise UsageError("store settings are a shared store's (PostgreSQL): a SQLite file "
                         "has one user, who sees all of its Echo")
    with h.db.transaction():
        h.db.meta.set_many(values)
    return [{"name": k, "value": v, "origin": "store", "help": "set for every user"}
            for k, v in values.items()]


def _store_rows(ctx: typer.Context, db: str | None) -> list[dict[str, Any]]:
    """A shared store's settings as its rows (origin `store`, or `default` when unset);
    none for a SQLite file. A server that cannot be read says why instead."""
    from hippo.config import is_server
    from hippo.errors import HippoError, NoDatabase

    h = open_hippo(ctx, db=db, read=True)
    if not is_server(h.settings.database):
        return []
    try:
        stored = h.db.meta.get_many(STORE_SETTINGS)
    except NoDatabase:
        stored = {}
    except HippoError as exc:
        return [{"name": name, "value": None, "origin": f"unread: {exc}", "help": ""}
                for name in STORE_SETTINGS]
    finally:
        if "db" in h.__dict__:
            h.db.close()
    return [{"name": name, "value": stored.get(name, default),
             "origin": "store" if name in stored else "default", "help": "for every user"}
            for name, (_, default) in STORE_SETTINGS.items()]


def _detected(loc: Location) -> str:
    """How the cwd gave the project: a worktree's repository, a git root, or its name."""
    if loc.linked:
        return f"git worktree of {loc.repo}"
    return f"git root {loc.root}" if loc.root else "cwd name"


SECRET_NAMES = ("api_key", "apikey", "token", "secret", "password")


def _masked(value: object) -> object:
    """A config table as shown: values of credential-like keys never reach the screen."""
    if isinstance(value, dict):
        return {k: "[redacted]" if str(k).lower().endswith(SECRET_NAMES) else _masked(v)
                for k, v in value.items()}
    return value
