"""The `hippo` console script.

Agents run `hippo search --json` on every task, each time as a new process, and importing
Typer costs more than the search itself once the query's embedding is cached. So a search
call whose arguments `hippo.cli.fastpath` fully understands runs without Typer; everything
else (other commands, --help, any argument in doubt) goes to the Typer app in
`hippo.cli.app`. So does every hook but `hippo hook AGENT session-end|stop`, which runs
while the agent shuts down (`hippo.cli.hook_learn`). Both paths run the same command body
and end here on error.

Every path reads and writes through the call's `Environment` (`hippo.console.environment`:
streams, their tty answers, variables, cwd, a warm process's engine): this process's own,
or the one the warm server builds for a client's call (`hippo.serve.execute`).
"""

from __future__ import annotations

import os
import sys

from hippo.errors import ExitCode, HippoError, scrub

TYPE_CHECKING = False  # not typing's: a call the warm server answers imports little else
if TYPE_CHECKING:
    from typing import Any

    from hippo.console.environment import Environment
    from hippo.serve.client import Outcome


def console() -> None:
    """The console script (and `python -m hippo`): `main`, leaving quickly after a search."""
    main(quick_exit=True)


def main(argv: list[str] | None = None, env: Environment | None = None, *,
         quick_exit: bool = False, serve: bool = True) -> None:
    """Run the command, turning hippo errors into one stderr line and an exit code.

    With `quick_exit`, a fast-path search that succeeded ends the process with `os._exit`
    once the output is flushed and the atexit handlers have run: tearing down the
    interpreter's modules would add 10-15 ms to every agent's search for nothing (the
    database is closed by then). In-process callers (tests, warm workers) keep the default.

    With `serve`, a read command goes to the database's warm server when one runs
    (`hippo.serve.client`) and runs here otherwise, starting a server for the next call;
    the server runs its calls with `serve=False` and the client's `env`.

    `env`: what the call runs in (default: this process's streams, variables and cwd).
    """
    argv = sys.argv[1:] if argv is None else argv
    served = _served(argv, quick_exit) if serve and env is None else None
    if served is not None and served.absent:
        _START.append(argv)  # after the call, before the process ends (`_leave` too)
    if env is None:
        from hippo.console.environment import Environment

        env = Environment.process(stdin=_stdin_back(served))
    debug = "--debug" in argv or env.debug
    err = env.stderr
    try:
        _run(argv, quick_exit, env)
    except HippoError as exc:
        if debug:
            _traceback(env)
        err.write(scrub(f"hippo: {exc}\n", env.environ))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        err.write("hippo: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # Downstream closed the pipe (e.g. `| head`): quiet, like other Unix tools.
        _quiet(env)
        sys.exit(int(ExitCode.OK))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, traceback on request
        if debug:
            _traceback(env)
            sys.exit(int(ExitCode.ERROR))
        name = type(exc).__name__
        err.write(scrub(f"hippo: unexpected {name}: {exc} (rerun with --debug for a "
                        "traceback)\n", env.environ))
        sys.exit(int(ExitCode.ERROR))
    finally:
        _start_pending()


def _quiet(env: Environment) -> None:
    """Send what is left of stdout to /dev/null (its reader is gone)."""
    try:
        fd = env.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a server's buffer: nothing to close
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)


def _run(argv: list[str], quick_exit: bool, env: Environment) -> None:
    from hippo.cli import fastpath

    call = fastpath.parse(argv)
    hook = None
    if call is None and "hook" in argv:  # a session-end hook: also without Typer
        from hippo.cli import hook_learn

        hook = hook_learn.parse(argv)
    if call is None and hook is None:
        _typer_app(argv, env)
        return
    if call is not None:
        if quick_exit:
            # A search is a bounded piece of work in a process that ends with it:
            # reference counting frees what it allocates, and the cyclic collector
            # would only walk the freshly imported modules' objects, again and
            # again (1-3 ms of a cached query's ~95 ms of CPU; docs/performance.md).
            import gc

            gc.disable()
        fastpath.run(call, env)
    else:
        hook_learn.run(*hook, env)  # type: ignore[misc, call-arg]
    env.stdout.flush()
    if quick_exit:
        _leave()


def _served(argv: list[str], quick_exit: bool) -> Outcome | None:
    """Try the warm server. When it ran the call, leave with its exit code; else the
    Outcome (with the stdin it read, which the command here then reads: `_stdin_back`),
    or None."""
    from hippo.serve import client

    if not client.forwardable(argv):
        return None
    try:
        outcome = client.run(argv)
    except BrokenPipeError:
        return None  # our stdout is closed: the command here meets it and exits quietly
    except Exception:  # noqa: BLE001 - the server never makes a call fail: run it here
        return None
    if outcome.code is not None:
        if quick_exit:
            _leave(outcome.code)
        sys.exit(outcome.code)
    return outcome


def _stdin_back(outcome: Outcome | None) -> Any:
    """The stdin the command reads when the server's client already read this process's:
    those bytes, in the stdin's encoding (None: the stdin itself)."""
    if outcome is None or outcome.stdin is None:
        return None
    import io

    encoding, errors = sys.stdin.encoding, sys.stdin.errors
    return io.TextIOWrapper(io.BytesIO(outcome.stdin), encoding=encoding, errors=errors)


_START: list[list[str]] = []  # calls that found no server: start one when they end


def _start_pending() -> None:
    """No server ran for this database: start one for the next call, unless turned off."""
    while _START:
        argv = _START.pop()
        try:
            from hippo.serve.spawn import auto_start

            auto_start(argv)
        except Exception:  # noqa: BLE001, S112 - best effort: the call itself was answered
            continue


_CLICK: list[object] = []  # a warm process's Click command, built once


def _app(warm: Any = None) -> Any:
    """The Typer app; in a warm process (`warm`: its `hippo.warm.Warm`, the environment's)
    the Click command Typer builds from it on every call (3-4 ms), built once."""
    from hippo.cli.app import app

    if warm is None:
        return app
    if not _CLICK:
        from typer.main import get_command

        _CLICK.append(get_command(app))
    return _CLICK[0]


def _typer_app(argv: list[str], env: Environment) -> None:
    """The Typer app, with Click's usage errors as one `hippo:` line (exit 2).

    Click's standalone mode prints three lines (Usage, Try, Error) for a bad flag; scripts
    and agents read the last line of stderr, people the first, so both get the same one.
    The commands reach `env` through the Click context's `obj` (`hippo.cli.common`).
    """
    from typer import Abort

    app = _app(env.warm)
    err = env.stderr
    try:  # Typer 0.2x carries its own copy of Click (pinned in pyproject)
        from typer._click import exceptions as click
    except ImportError:  # pragma: no cover - a Typer that uses Click itself
        from click import exceptions as click  # type: ignore[no-redef]

    try:
        # `face`: this command line, for `hippo serve` to run its calls with (the server
        # imports no face: hippo.serve.execute.Face)
        code = app(prog_name="hippo", args=argv, standalone_mode=False,
                   obj={"env": env, "face": (main, _app)})
    except click.NoArgsIsHelpError as exc:  # `hippo`, `hippo project`: the help
        exc.show(file=err)
        sys.exit(int(ExitCode.USAGE))
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "hippo"
        err.write(scrub(f"hippo: {exc.format_message()} (`{where} --help` for usage)\n",
                        env.environ))
        sys.exit(int(ExitCode.USAGE))
    except click.ClickException as exc:  # e.g. a file argument Click could not open
        err.write(scrub(f"hippo: {exc.format_message()}\n", env.environ))
        sys.exit(exc.exit_code)
    except Abort:  # Ctrl-C (or EOF at a prompt) that Click caught first
        raise KeyboardInterrupt from None
    # Outside standalone mode Click returns a command's `typer.Exit(code)` instead of
    # exiting; commands themselves return None.
    if isinstance(code, int) and code:
        sys.exit(code)


def _leave(code: int = int(ExitCode.OK)) -> None:
    import atexit

    sys.stdout.flush()
    _start_pending()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _traceback(env: Environment) -> None:
    """--debug: the traceback, with credentials a provider quoted back masked all the same."""
    import traceback

    env.stderr.write(scrub(traceback.format_exc(), env.environ))


__all__ = ["console", "main"]
