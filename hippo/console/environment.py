"""What one call runs in: its streams, whether each is a terminal, its environment
variables, its working directory, and the warm engine of a long-lived process.

A command body reads and writes only through its `Environment` (as httpie's
`core.main(args, env)`), never through `sys.stdin/stdout/stderr`, `os.environ` or the
process's cwd: so the warm server (`hippo.serve.execute`) runs a client's call with the
client's streams, variables and directory without swapping anything process-wide, and a
test runs a command the same way. `Environment.process()` is the one a plain CLI
process runs with.

Imports only `os` and `sys`: the search fast path builds one on every call.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: this module is on the search fast path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):  # None (no console), a closed stream
        return False


def _process_cwd() -> str:
    """The working directory; a deleted one (a removed worktree) by the shell's $PWD."""
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD") or "."


class Environment:
    """The streams, variables, directory and warm engine one call runs with.

    A plain class (no dataclasses: importing them costs the fast path). `stdout_isatty`
    and the others are the answers a command asks instead of `stream.isatty()`: computed
    from the real streams for a process, False for a server's buffers (only a call whose
    output is piped is served)."""

    __slots__ = ("cwd", "debug", "environ", "stderr", "stderr_isatty", "stdin",
                 "stdin_isatty", "stdout", "stdout_isatty", "warm")

    def __init__(self, *, stdin: TextIO, stdout: TextIO, stderr: TextIO,
                 environ: Mapping[str, str], cwd: str, stdin_isatty: bool = False,
                 stdout_isatty: bool = False, stderr_isatty: bool = False,
                 warm: Any = None) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.stdin_isatty, self.stdout_isatty = stdin_isatty, stdout_isatty
        self.stderr_isatty = stderr_isatty
        self.environ = environ
        self.cwd = cwd
        self.warm = warm  # hippo.warm.Warm of a long-lived process; None in a plain CLI
        # Tracebacks on errors: HIPPO_DEBUG=1, or --debug (which sets it for this call).
        self.debug = environ.get("HIPPO_DEBUG") == "1"

    @classmethod
    def process(cls, *, stdin: TextIO | None = None, warm: Any = None) -> Environment:
        """This process's own: `sys.std*` (`stdin`: another text stream to read instead,
        e.g. the bytes a warm server's client already read), `os.environ`, the cwd."""
        given = stdin if stdin is not None else sys.stdin
        return cls(stdin=given, stdout=sys.stdout, stderr=sys.stderr, environ=os.environ,
                   cwd=_process_cwd(), stdin_isatty=_isatty(given),
                   stdout_isatty=_isatty(sys.stdout), stderr_isatty=_isatty(sys.stderr),
                   warm=warm)

    def set_debug(self) -> None:
        """--debug: tracebacks on errors for this call (and, in a process's own
        environment, for the processes it starts, as HIPPO_DEBUG=1 always did)."""
        self.debug = True
        if self.environ is os.environ:
            os.environ["HIPPO_DEBUG"] = "1"

    def with_warm(self, warm: Any) -> Environment:
        """The same environment with a long-lived process's warm engine."""
        other = Environment(stdin=self.stdin, stdout=self.stdout, stderr=self.stderr,
                            environ=self.environ, cwd=self.cwd,
                            stdin_isatty=self.stdin_isatty, stdout_isatty=self.stdout_isatty,
                            stderr_isatty=self.stderr_isatty, warm=warm)
        other.debug = self.debug
        return other


def current(env: Environment | None) -> Environment:
    """`env`, or this process's environment when a caller gave none (tests, library use)."""
    return env if env is not None else Environment.process()


__all__ = ["Environment", "current"]
