"""`hippo serve`: the optional warm server of a database (start, stop, ask)."""

# No `from __future__ import annotations`: Typer evaluates the annotations.
import sys
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, root_flags
from hippo.errors import ExitCode, HippoError

STATUS_FIELDS = ("pid", "database", "socket", "hippo", "uptime_s", "calls", "idle_s",
                 "idle_exit_s", "auto", "rss_mb", "embedders")


def serve(
    ctx: typer.Context,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the running server.")] = False,
    status: Annotated[bool, typer.Option("--status", help="Say whether a server runs, what "
                                         "it holds and its RSS (exit 1: none runs).")] = False,
    detach: Annotated[bool, typer.Option("--detach", help="Start it in the background and "
                                         "return once it answers.")] = False,
    idle_minutes: Annotated[float | None, typer.Option(
        "--idle-minutes", min=0.01, show_default=False,
        help="Exit after this long without a call (default 30, or [serve] idle_minutes).",
    )] = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Run the warm server: searches, echo, context and hooks answered in milliseconds.

    Optional: every command works without it, with the same output. A call that finds no
    server for an existing database starts one in the background (`[serve] auto_start =
    false` turns that off); such a server makes the user's other automatic ones stop, and
    it exits after 30 idle minutes, once its database file is gone, on SIGTERM or on
    `hippo serve --stop`. One server per database and user, on a Unix socket only that
    user can reach (docs/serve.md).
    Without options it runs in the foreground, saying on stderr what it serves.
    """
    from hippo.serve import spawn

    flag = str(db) if db else root_flags(ctx).get("db")
    files = spawn.files_for(flag)
    if stop:
        _stop(files)
    elif status:
        _status(files, json)
    elif detach:
        _detach(flag, files, idle_minutes)
    else:
        _foreground(flag, idle_minutes, ctx.find_root().obj.get("face"))


def _foreground(flag: Any, idle_minutes: float | None, face: Any) -> None:
    """Serve in this process; `face`: `hippo.cli.main`'s main and Click command, which
    `main` gave the root context (so neither side imports the other)."""
    from hippo.serve import address
    from hippo.serve.daemon import run
    from hippo.serve.execute import Face
    from hippo.serve.server import AlreadyRunning

    try:
        why = run(flag, face=Face(*face), idle_minutes=idle_minutes)
    except AlreadyRunning as exc:
        sys.stderr.write(f"hippo: a server for this database is already running (pid {exc})\n")
        return
    except address.Unsafe as exc:
        raise HippoError(f"not serving: {exc}; it must be a directory of your own, mode "
                         "0700", exit_code=ExitCode.CONFIG) from None
    sys.stderr.write(f"hippo: server stopped: {why}\n")


def _detach(flag: Any, files: dict[str, str], idle_minutes: float | None) -> None:
    from hippo.serve import address, spawn

    running = spawn.ask(files, "status")
    if running is None or "pid" not in running:
        try:
            address.check(files["dir"], create=True)
        except address.Unsafe as exc:
            raise HippoError(f"not serving: {exc}", exit_code=ExitCode.CONFIG) from None
        spawn.launch(flag, files, idle_minutes=idle_minutes)
        if not spawn.wait_for(files, up=True):
            raise HippoError(f"the server did not start; its log: {files['log']}")
        running = spawn.ask(files, "status") or {}
    sys.stderr.write(f"hippo: serving {running.get('database')} on {files['sock']} "
                     f"(pid {running.get('pid')})\n")


def _stop(files: dict[str, str]) -> None:
    from hippo.serve import spawn

    answer = spawn.ask(files, "stop")
    if answer is None or not answer.get("stopping"):
        sys.stderr.write("hippo: no server runs for this database\n")
        return
    if not spawn.wait_for(files, up=False):
        raise HippoError(f"the server (pid {answer.get('pid')}) has not stopped yet",
                         exit_code=ExitCode.TEMPFAIL)
    sys.stderr.write(f"hippo: stopped the server (pid {answer.get('pid')})\n")


def _status(files: dict[str, str], json_flag: bool) -> None:
    from hippo.console.output import want_json, write_json_lines
    from hippo.serve import spawn

    answer = spawn.ask(files, "status")
    if answer is None or "pid" not in answer:
        sys.stderr.write("hippo: no server runs for this database\n")
        raise typer.Exit(int(ExitCode.ERROR))
    if want_json(json_flag):
        write_json_lines([answer])
        return
    for name in STATUS_FIELDS:
        if name in answer:
            sys.stdout.write(f"{name}: {answer[name]}\n")
    for path, held in (answer.get("vectors") or {}).items():
        sys.stdout.write(f"vectors: {path}: {held}\n")
