"""Run one client's call inside the server, exactly as the client's own process would.

The call runs `hippo.cli.main.main` with the client's argv in an `Environment`
(`hippo.console.environment`) built from the request: the client's variables and working
directory, stdin, stdout and stderr buffers in the client's encodings (never a terminal:
only calls whose output is piped come here). Nothing process-wide changes: no
`os.environ` write, no chdir, no `sys.std*` assignment; the command bodies read and write
only through the environment, so nothing another thread of the server writes (another
connection's traceback, the preload's note) ever reaches a client. What the call printed
and its exit code go back to the client byte for byte, in the order it was written.

What the code under the commands still reads from the process (`PROCESS_READ`: the
home and config directories' variables, API keys and endpoints, proxies, libpq's
variables, HIPPO_THREADS) must be the same in the call's environment as in the server's,
else the call is refused and the client runs it itself; so is a call whose store or
config is named by a relative path (it would be read relative to the server's cwd), and
one that asks for Click's help (`--help`, `-h`: Click prints it to the process's stdout).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import Any, NamedTuple

# Variables read from the process below the command bodies (platformdirs, the OpenAI and
# Voyage clients, httpx's proxies, libpq, onnxruntime's threads) and by name prefix.
PROCESS_READ = ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HIPPO_THREADS",
                "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE",
                "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "_HIPPO_COMPLETE",
                "HIPPO_FAILPOINT", "HIPPO_USER")
PROCESS_PREFIXES = ("OPENAI_", "VOYAGE_", "HIPPO_VOYAGE_", "PG")


class Refused(Exception):
    """The call cannot run here (the client runs it itself): `reason` is one word."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class _Buffer(io.TextIOWrapper):
    """A text stream over bytes in memory, as a pipe's would be (not a terminal)."""

    def __init__(self, data: bytes, encoding: str, errors: str) -> None:
        super().__init__(io.BytesIO(data), encoding=encoding, errors=errors,
                         line_buffering=False)

    def value(self) -> bytes:
        self.flush()
        raw: io.BytesIO = self.buffer  # type: ignore[assignment]
        return raw.getvalue()


def _stream(streams: dict[str, Any], name: str, data: bytes = b"") -> _Buffer:
    encoding, errors = (streams.get(name) or ["utf-8", "strict"])[:2]
    try:
        return _Buffer(data, str(encoding), str(errors))
    except LookupError:  # an encoding this Python does not know: the client's own run
        raise Refused("encoding", str(encoding)) from None


def admissible(argv: list[str], env: dict[str, str], cwd: str) -> None:
    """Refused when the call cannot run here as in the client's own process: not one of the
    commands the server runs (`client.servable`: those read and write only through their
    environment; never Click's help), its directory is gone or not ours to enter, or a
    variable the code under the commands reads from the process (`PROCESS_READ`) differs
    from the server's."""
    from hippo.serve.client import servable

    if not servable(argv):
        raise Refused("argv", "not a served command")
    if not (os.path.isabs(cwd) and os.path.isdir(cwd) and os.access(cwd, os.X_OK)):
        raise Refused("cwd", cwd)
    names = {*PROCESS_READ, *(name for name in (*env, *os.environ)
                              if name.startswith(PROCESS_PREFIXES))}
    for name in sorted(names):
        if env.get(name) != os.environ.get(name):
            raise Refused("env", name)


class Face(NamedTuple):
    """The command line the server runs its calls with (`hippo.cli.main`'s `main` and
    `_app`), handed in by `hippo serve`: the server imports no face."""

    main: Callable[..., None]  # main(argv, env, serve=False)
    command: Callable[[Any], Any]  # the Click command, built once for a warm process


def db_option(argv: list[str], face: Face, warm: Any = None) -> str | None:
    """The `--db` the call gives, read as Click reads it (the command's over the root's):
    the client's quick reading (`address.db_flag`) only chose which server to ask, and an
    argv they read differently (`search --db A --project --db B`) is refused here."""
    cmd = face.command(warm)
    try:
        root = cmd.make_context("hippo", list(argv), resilient_parsing=True)
        rest = [*getattr(root, "_protected_args", []), *root.args]
        name, sub, args = cmd.resolve_command(root, rest)
        if sub is None or name is None:
            raise Refused("argv")
        ctx = sub.make_context(name, args, parent=root, resilient_parsing=True)
    except Refused:
        raise
    except Exception as exc:  # noqa: BLE001 - Click's usage errors: the client's run says them
        raise Refused("argv", str(exc)) from None
    found = ctx.params.get("db") or root.params.get("db")
    return None if found is None else str(found)


class _Recorder(io.RawIOBase):
    """The file under a call's stdout or stderr: each write the stream lets through is
    kept, in order with the other stream's, so a client whose stdout and stderr are one
    pipe (`2>&1`) gets them interleaved as the call's own process would have written them."""

    def __init__(self, which: int, log: list[tuple[int, bytes]]) -> None:
        super().__init__()
        self.which, self.log = which, log

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if chunk:
            self.log.append((self.which, chunk))
        return len(chunk)


def _writer(streams: dict[str, Any], which: int, log: list[tuple[int, bytes]]
            ) -> io.TextIOWrapper:
    """stdout (0) or stderr (1) buffered as Python buffers them on a pipe: stdout in blocks
    of the pipe's size, stderr written through at every write."""
    name = ("stdout", "stderr")[which]
    info = streams.get(name) or ["utf-8", "strict"]
    encoding, errors = str(info[0]), str(info[1])
    raw = _Recorder(which, log)
    try:
        if which == 0:
            size = int(info[2]) if len(info) > 2 and int(info[2]) > 0 else io.DEFAULT_BUFFER_SIZE
            return io.TextIOWrapper(io.BufferedWriter(raw, size), encoding=encoding,
                                    errors=errors)
        return io.TextIOWrapper(raw, encoding=encoding, errors=errors,  # type: ignore[arg-type]
                                write_through=True)
    except LookupError:  # an encoding this Python does not know: the client's own run
        raise Refused("encoding", encoding) from None


def environment(request: dict[str, Any], stdin: bytes, warm: Any = None
                ) -> tuple[Any, io.TextIOWrapper, io.TextIOWrapper, list[tuple[int, bytes]]]:
    """The call's Environment (the client's variables, cwd and streams, this server's warm
    engine), its stdout and stderr, and the log of what they wrote."""
    from hippo.console.environment import Environment

    streams = request.get("streams") or {}
    log: list[tuple[int, bytes]] = []
    out, err = _writer(streams, 0, log), _writer(streams, 1, log)
    env = Environment(stdin=_stream(streams, "stdin", stdin), stdout=out, stderr=err,
                      environ=dict(request["env"]), cwd=str(request["cwd"]), warm=warm)
    return env, out, err, log


def run(request: dict[str, Any], stdin: bytes, warm: Any = None, *, face: Face
        ) -> tuple[int, bytes, bytes, list[list[int]]]:
    """Run the client's call here (`warm`: the server's `hippo.warm.Warm`): its exit code,
    stdout, stderr, and the order they were written in ([stream (0: stdout, 1: stderr),
    bytes], ...)."""
    argv = list(request["argv"])
    admissible(argv, request["env"], request["cwd"])
    env, out, err, log = environment(request, stdin, warm)
    code: Any = 0
    try:
        face.main(argv, env, serve=False)
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("text"): Python prints it and exits 1
        err.write(f"{code}\n")
        code = 1
    out.flush()  # as a process ends: stdout's buffer, then stderr's
    err.flush()
    order: list[list[int]] = []
    for which, chunk in log:
        if order and order[-1][0] == which:
            order[-1][1] += len(chunk)
        else:
            order.append([which, len(chunk)])
    return (code, b"".join(c for w, c in log if w == 0), b"".join(c for w, c in log if w == 1),
            order)


__all__ = ["PROCESS_READ", "Refused", "admissible", "db_option", "environment", "run"]
