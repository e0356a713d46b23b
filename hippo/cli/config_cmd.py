"""`hippo config`: every effective setting and path, and where each came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo

if TYPE_CHECKING:
    from hippo.project import Location


def config(ctx: typer.Context, db: DbOpt = None, json: JsonOpt = False) -> None:
    """Show effective settings and paths with their origin (flag, env, file, default)."""
    from hippo import config as cfg
    from hippo.output import emit

    h = open_hippo(ctx, db=db)
    s = h.settings
    from hippo.store.location import display

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
    emit(rows, json_flag=json, columns=("name", "value", "origin"))


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
