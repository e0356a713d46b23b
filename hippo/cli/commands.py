"""Where each command module is attached to the app (one line per command)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from hippo.cli import add, config_cmd, export, forget, listing, show, stats
    from hippo.cli.common import handled

    def command(name: str, fn: object) -> None:
        app.command(name)(handled(fn))

    command("add", add.add)
    command("show", show.show)
    command("list", listing.list_)
    command("forget", forget.forget)
    command("pin", forget.pin)
    command("unpin", forget.unpin)
    command("export", export.export)
    command("import", export.import_)
    command("stats", stats.stats)
    command("config", config_cmd.config)
