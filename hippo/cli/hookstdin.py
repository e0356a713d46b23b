"""A hook's stdin, read the way agents write it; imported by the hooks and by the warm
server's client (`hippo.serve.client`), so it imports nothing but `os` and `sys`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # not typing's: the warm server's client imports this module
if TYPE_CHECKING:
    from typing import Any

STDIN_WAIT_S = 5.0  # longest wait for the stdin's JSON (see read_stdin)
# What this process has read of its stdin and by when it must be whole: a second read (the
# command run here after the warm server's client gave up on it) goes on from there, so a
# process waits for its stdin once, never twice (`hippo.serve.client`).
_SO_FAR = bytearray()
_END: dict[tuple[int, int], float] = {}  # (the stdin's device, inode) → its deadline


class HookInputError(Exception):
    """The hook's arguments or stdin are not what the agent sends."""


def read_stdin(parse: Callable[[bytes], object], stream: Any = None) -> bytes:
    """The hook's stdin: up to EOF, or as soon as it holds a whole JSON document.

    An agent writes its JSON at once, but need not close the pipe (a SessionEnd hook that
    waited for EOF has been seen cancelled at every exit), so a hook that waited for EOF
    would hang until the agent gives up on it. Nothing complete within STDIN_WAIT_S of the
    process's first read is an error. A person typing at a terminal ends with Ctrl-D.
    `stream`: the call's stdin (`hippo.console.environment`; default this process's)."""
    stdin = sys.stdin if stream is None else stream
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a server's, tests)
        return bytes(stdin.buffer.read())
    if os.isatty(fd):
        return bytes(stdin.buffer.read())
    import select
    import time

    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) not in _END:  # this stdin's first read (tests: another pipe)
        _END.clear()
        _SO_FAR.clear()
        _END[st.st_dev, st.st_ino] = time.monotonic() + STDIN_WAIT_S
    buf, end = _SO_FAR, _END[st.st_dev, st.st_ino]
    while (left := end - time.monotonic()) > 0:
        if not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return bytes(buf)
        buf += chunk
        if buf.rstrip().endswith(b"}"):
            try:
                parse(bytes(buf))
            except (ValueError, RecursionError):
                continue  # not whole yet
            return bytes(buf)
    raise HookInputError(f"stdin sent no whole JSON object within {STDIN_WAIT_S:g} s")


__all__ = ["STDIN_WAIT_S", "HookInputError", "read_stdin"]
