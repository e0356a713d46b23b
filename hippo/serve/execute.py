"""Run one client's call inside the server, exactly as the client's own process would.

The call runs `hippo.cli.main.main` with the client's argv, in the client's working
directory and environment, with stdin, stdout and stderr buffers in the client's encodings
(never a terminal: only calls whose output is piped come here). `sys.stdin`, `sys.stdout`
and `sys.stderr` are `Dispatch` streams, installed once: each thread's reads and writes go
to the streams of the call that thread runs, so nothing another thread of the server
writes (another connection's traceback, the preload's note) ever reaches a client; a
thread that runs no call writes to the server's own streams (its log). The environment and
the directory are the process's, so calls run one at a time (`Server` holds the lock);
what the call printed and its exit code go back to the client byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any


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


class Dispatch:
    """`sys.stdin`/`stdout`/`stderr` of a server: the stream of the call this thread runs,
    else the server's own. (No `__weakref__`: Click caches a wrapper of a stream it deems
    misconfigured per stream object, which would tie this one to a single call's buffer.)"""

    __slots__ = ("_default", "_local")

    def __init__(self, default: Any) -> None:
        object.__setattr__(self, "_default", default)
        object.__setattr__(self, "_local", threading.local())

    def current(self) -> Any:
        return getattr(self._local, "stream", None) or self._default

    def use(self, stream: Any) -> None:
        """This thread's calls go to `stream` (None: the server's own again)."""
        self._local.stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current(), name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.current())

    def write(self, text: str) -> int:
        return int(self.current().write(text))

    def flush(self) -> None:
        self.current().flush()


def install() -> tuple[Dispatch, Dispatch, Dispatch]:
    """Make this process's standard streams per-thread (once); the three Dispatch."""
    for name in ("stdin", "stdout", "stderr"):
        if not isinstance(getattr(sys, name), Dispatch):
            setattr(sys, name, Dispatch(getattr(sys, name)))
    return sys.stdin, sys.stdout, sys.stderr  # type: ignore[return-value]


def _stream(streams: dict[str, Any], name: str, data: bytes = b"") -> _Buffer:
    encoding, errors = (streams.get(name) or ["utf-8", "strict"])[:2]
    try:
        return _Buffer(data, str(encoding), str(errors))
    except LookupError:  # an encoding this Python does not know: the client's own run
        raise Refused("encoding", str(encoding)) from None


@contextlib.contextmanager
def client_process(env: dict[str, str], cwd: str) -> Iterator[None]:
    """This process, for the duration, in the client's environment and directory."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.chdir(cwd)
    except OSError as exc:  # gone (a removed worktree) or not ours to enter
        raise Refused("cwd", exc.strerror or type(exc).__name__) from None
    try:
        os.environ.clear()
        os.environ.update(env)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        try:
            os.chdir(saved_cwd)
        except OSError:
            os.chdir("/")


def db_option(argv: list[str]) -> str | None:
    """The `--db` the call gives, read as Click reads it (the command's over the root's):
    the client's quick reading (`address.db_flag`) only chose which server to ask, and an
    argv they read differently (`search --db A --project --db B`) is refused here."""
    from hippo.cli.main import _app

    cmd = _app()
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


def run(request: dict[str, Any], stdin: bytes) -> tuple[int, bytes, bytes, list[list[int]]]:
    """Run the client's call here: its exit code, stdout, stderr, and the order they were
    written in ([stream (0: stdout, 1: stderr), bytes], ...)."""
    from hippo.cli.main import main

    streams = request.get("streams") or {}
    log: list[tuple[int, bytes]] = []
    out, err = _writer(streams, 0, log), _writer(streams, 1, log)
    inp = _stream(streams, "stdin", stdin)
    dispatch = install()
    code: Any = 0
    with client_process(request["env"], request["cwd"]):
        for stream, mine in zip(dispatch, (inp, out, err), strict=True):
            stream.use(mine)
        try:
            main(list(request["argv"]), serve=False)
        except SystemExit as exc:
            code = exc.code
        finally:
            for stream in dispatch:
                stream.use(None)
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


__all__ = ["Dispatch", "Refused", "client_process", "db_option", "install", "run"]
