"""The client side of the warm server: send a read command to `hippo serve`, or say why not.

`hippo.cli.main` asks `forwardable(argv)` first; for a search, an echo query, `context` or
a prompt / session-start hook, with neither stdout nor stderr a terminal, `run(argv)`
sends the call (argv, cwd, the whole environment, stdin when the command reads it) and
writes back the server's stdout, stderr and exit code byte for byte. On anything else (no
server, a stale socket, another version, a server busy past the deadline or gone
mid-request, a socket that is not the user's own) `run` returns an `Outcome` without a code
and the caller runs the command itself, as it would have without a server: the output is
the same either way. The server never makes a call fail.

This module is the whole cost of a served call on the client: it imports `os`, `sys`,
`_socket`, `json` and `_blake2`, never Typer, numpy or onnxruntime (tested).
"""

from __future__ import annotations

import os
import sys
import time

from hippo.serve import address

TYPE_CHECKING = False  # not typing's (hippo.serve.wire says why)
if TYPE_CHECKING:
    from hippo.serve.wire import socket

VERSION = "0.1.0"  # hippo.__version__ (tests/serve checks they agree); no import of hippo
CONNECT_S = 0.05  # a listening Unix socket answers connect at once; a full backlog waits
START_S = 0.3  # the server must have started the call by then (one call runs at a time)
FINISH_S = 30.0  # and finish it by then
# A hook's call, served in about 60 ms: past this the server is stalled, and the hook runs
# itself well within the agent's own timeout (Claude Code's default for a hook is 60 s,
# the documented setup gives 10-15 s).
HOOK_FINISH_S = 5.0
ROOT_WITH_VALUE = ("--db", "--project", "-p", "--embedder")
COMMANDS = ("search", "echo", "context", "hook")
HOOK_EVENTS = ("prompt", "session-start", "userpromptsubmit", "user-prompt-submit",
               "sessionstart")
MAX_STDIN = 64 << 20  # more than this is read and run here


class Outcome:
    """What came of trying the server: `code` (the command ran there) or `reason`, and the
    stdin already read for the command, which the caller must then give it."""

    def __init__(self, code: int | None = None, reason: str = "",
                 stdin: bytes | None = None) -> None:
        self.code, self.reason, self.stdin = code, reason, stdin

    @property
    def absent(self) -> bool:
        """No server runs for this database (so the caller may start one)."""
        return self.reason == "absent"


def command(argv: list[str]) -> tuple[str, int] | None:
    """The command word of `argv` and its index, after the root options."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ROOT_WITH_VALUE:
            i += 2
        elif arg == "--debug" or arg.startswith(("--db=", "--project=", "--embedder=")):
            i += 1
        elif arg.startswith("-"):
            return None
        else:
            return arg, i
    return None


def forwardable(argv: list[str]) -> bool:
    """Whether the server may run this call: a read command whose output goes to a pipe or
    file (a terminal's width and colours stay the caller's), with serving not turned off."""
    if os.environ.get("HIPPO_SERVE", "").lower() in ("off", "0", "no", "false"):
        return False
    if "_HIPPO_COMPLETE" in os.environ or not servable(argv):
        return False  # Click writes completions itself: run where it was typed
    try:
        return not (os.isatty(1) or os.isatty(2))
    except OSError:
        return False


def servable(argv: list[str]) -> bool:
    """Whether `argv` is a call the server runs (the server checks it again): search, an
    echo query, context, a prompt / session-start hook; never Click's help."""
    found = command(argv)
    if found is None or found[0] not in COMMANDS:
        return False
    name, at = found
    rest = argv[at + 1:]
    words = rest[:rest.index("--")] if "--" in rest else rest
    if "--help" in words or "-h" in words:
        return False  # Click prints help to the process's stdout: run where it was typed
    if name == "echo" and any(a.startswith("--forget-session") for a in rest):
        return False  # a purge: a write, run where it was typed
    if name == "hook":
        words = [a for a in rest if not a.startswith("-")]
        if len(words) < 2 or words[1].lower() not in HOOK_EVENTS:
            return False  # session-end / stop start a job; an event from stdin is unknown
    return True


def run(argv: list[str]) -> Outcome:
    """Run `argv` on this database's server, or say why it did not."""
    try:
        cwd = os.getcwd()
    except OSError:
        return Outcome(reason="cwd")
    files = address.paths(address.key(address.spec(address.db_flag(argv), os.environ, cwd)))
    if not os.path.lexists(files["sock"]):
        return Outcome(reason="absent")  # all a call that finds no server pays: an lstat
    from hippo.serve import wire  # the protocol's imports, only now

    sock = wire.dial(files["sock"], CONNECT_S)
    if isinstance(sock, str):
        return Outcome(reason=sock)
    try:
        found = command(argv)
        return _call(sock, argv, cwd, _stdin(argv, found), found)
    finally:
        sock.close()


def _call(sock: socket.socket, argv: list[str], cwd: str, stdin: bytes | None,
          found: tuple[str, int] | None) -> Outcome:
    from hippo.serve import wire

    if stdin is not None and len(stdin) > MAX_STDIN:
        return Outcome(reason="stdin", stdin=stdin)
    request = {"protocol": wire.PROTOCOL, "hippo": VERSION, "op": "run", "argv": argv,
               "cwd": cwd, "env": dict(os.environ), "start_by": time.time() + START_S,
               "streams": {name: [stream.encoding, stream.errors, _blksize(stream)]
                           for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout),
                                                ("stderr", sys.stderr)) if stream is not None},
               "stdin": stdin is not None}
    try:
        wire.send_json(sock, request)
        if stdin is not None:
            wire.send(sock, stdin)
        started = wire.recv_json(sock, time.monotonic() + START_S + CONNECT_S)
        if not started.get("started"):
            return Outcome(reason=str(started.get("refused") or "refused"), stdin=stdin)
        end = time.monotonic() + (HOOK_FINISH_S if found and found[0] == "hook" else FINISH_S)
        result = wire.recv_json(sock, end)
        if "code" not in result:
            return Outcome(reason=str(result.get("refused") or "refused"), stdin=stdin)
        out, err = wire.recv(sock, end), wire.recv(sock, end)
    except (wire.Closed, OSError):
        return Outcome(reason="lost", stdin=stdin)  # the server died or stalled: run here
    at = [0, 0]
    for which, size in result.get("order") or [[0, len(out)], [1, len(err)]]:
        data = (out, err)[which]
        _write((sys.stdout, sys.stderr)[which], data[at[which]:at[which] + size])
        at[which] += size
    return Outcome(code=int(result["code"]))


def _stdin(argv: list[str], found: tuple[str, int] | None) -> bytes | None:
    """The bytes the command would read from stdin: a hook's JSON, a `-` argument's text."""
    if found is not None and found[0] == "hook":
        import json

        from hippo.cli.hookstdin import read_stdin

        return read_stdin(json.loads)
    if "-" in argv[(found[1] + 1) if found else 0:]:
        return sys.stdin.buffer.read()
    return None


def _blksize(stream: object) -> int:
    """The block size a process's own stdout is buffered in (a pipe's, a file's)."""
    try:
        return os.fstat(stream.fileno()).st_blksize  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return 0


def _write(stream: object, data: bytes) -> None:
    if data:
        stream.flush()  # type: ignore[attr-defined]
        stream.buffer.write(data)  # type: ignore[attr-defined]
        stream.flush()  # type: ignore[attr-defined]


__all__ = ["COMMANDS", "Outcome", "forwardable", "run", "servable"]
