"""Where each command module is attached to the app (one line per command)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from hippo.cli import add, config_cmd, export, forget, listing, show, stats

    app.command("add")(add.add)
    app.command("show")(show.show)
    app.command("list")(listing.list_)
    app.command("forget")(forget.forget)
    app.command("pin")(forget.pin)
    app.command("unpin")(forget.unpin)
    app.command("export")(export.export)
    app.command("import")(export.import_)
    app.command("stats")(stats.stats)
    app.command("config")(config_cmd.config)
