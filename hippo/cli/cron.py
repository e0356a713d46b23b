"""`hippo cron --print`: crontab entries with this machine's hippo and database paths."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo


def cron(
    ctx: typer.Context,
    print_: Annotated[bool, typer.Option("--print", help="Print the entries (what this "
                                         "command does; it installs nothing).")] = False,
    log: Annotated[Path | None, typer.Option(help="Log file the jobs append to (default: "
                                             "hippo-cron.log next to the database file, or in "
                                             "the data directory for a server).",
                                             show_default=False, dir_okay=False)] = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print crontab lines: hourly ingest+extract, daily backstop, nightly consolidate+retire."""
    import os

    from hippo.config import display, home_dir
    from hippo.maintain.cron import crontab, env_to_pass, hippo_command

    h = open_hippo(ctx, db=db)
    database = h.settings.database
    if isinstance(database, str):  # a server: its URL without the password (~/.pgpass)
        target, folder = display(database), home_dir()
    else:
        target, folder = os.path.abspath(database), Path(os.path.abspath(database)).parent
    log_path = Path(os.path.abspath(log)) if log else folder / "hippo-cron.log"
    text = crontab(hippo_command(), target, str(log_path), env_to_pass(os.environ))
    if json:  # one object per crontab entry (comments and blank lines left out)
        from hippo.console.output import write_json_lines

        write_json_lines({"event": "cron", "line": line} for line in text.splitlines()
                         if line.strip() and not line.lstrip().startswith("#"))
        return
    sys.stdout.write(text)
