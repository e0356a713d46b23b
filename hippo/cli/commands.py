"""Where each command module is attached to the app (one line per command)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from importlib import import_module

    from hippo.cli import (add, config_cmd, doctor, echo, export, forget, ingest, listing, show,
                           stats)
    from hippo.cli.common import handled

    def command(name: str, fn: object) -> None:
        app.command(name)(handled(fn))

    command("add", add.add)
    command("search", import_module("hippo.cli.search").search)
    command("show", show.show)
    command("list", listing.list_)
    command("forget", forget.forget)
    command("pin", forget.pin)
    command("unpin", forget.unpin)
    command("export", export.export)
    command("import", export.import_)
    command("stats", stats.stats)
    command("config", config_cmd.config)
    command("ingest", ingest.ingest)
    command("echo", echo.echo)
    command("extract", import_module("hippo.cli.extract").extract)
    command("doctor", doctor.doctor)
    command("context", import_module("hippo.cli.context").context)
    command("guidance", import_module("hippo.cli.guidance").guidance)
    command("hook", import_module("hippo.cli.hook").hook)
    command("consolidate", import_module("hippo.cli.consolidate").consolidate)
    command("retire", import_module("hippo.cli.retire").retire)
    command("done", import_module("hippo.cli.lifecycle").done)
    command("verify", import_module("hippo.cli.lifecycle").verify)
    command("edit", import_module("hippo.cli.lifecycle").edit)
    command("supersede", import_module("hippo.cli.lifecycle").supersede)
    command("undo", import_module("hippo.cli.undo").undo)
    command("reindex", import_module("hippo.cli.reindex").reindex)
    command("cron", import_module("hippo.cli.cron").cron)
