"""The `hippo` console script.

Agents run `hippo search --json` on every task, each time as a new process, and importing
Typer costs more than the search itself once the query's embedding is cached. So a search
call whose arguments `hippo.cli.fastpath` fully understands runs without Typer; everything
else (other commands, --help, any argument in doubt) goes to the Typer app in
`hippo.cli.app`. Both paths run the same command body and end here on error.
"""

from __future__ import annotations

import os
import sys

from hippo.errors import ExitCode, HippoError, scrub


def main() -> None:
    """Entry point: run the command, turning hippo errors into one stderr line and an exit code."""
    argv = sys.argv[1:]
    debug = "--debug" in argv or os.environ.get("HIPPO_DEBUG") == "1"
    try:
        from hippo.cli import fastpath

        call = fastpath.parse(argv)
        if call is not None:
            fastpath.run(call)
            sys.stdout.flush()
        else:
            from hippo.cli.app import app

            app(prog_name="hippo")
    except HippoError as exc:
        if debug:
            _traceback()
        sys.stderr.write(scrub(f"hippo: {exc}\n"))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        sys.stderr.write("hippo: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # Downstream closed the pipe (e.g. `| head`): quiet, like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(int(ExitCode.OK))
    except Exception as exc:  # noqa: BLE001 - last resort: one line, traceback on request
        if debug:
            _traceback()
            sys.exit(int(ExitCode.ERROR))
        name = type(exc).__name__
        sys.stderr.write(scrub(f"hippo: unexpected {name}: {exc} (rerun with --debug for a "
                               "traceback)\n"))
        sys.exit(int(ExitCode.ERROR))


def _traceback() -> None:
    """--debug: the traceback, with credentials a provider quoted back masked all the same."""
    import traceback

    sys.stderr.write(scrub(traceback.format_exc()))


__all__ = ["main"]
