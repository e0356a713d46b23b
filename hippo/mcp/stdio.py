"""Run the server over stdio for as long as the client keeps the pipe open.

stdout belongs to the protocol. Before anything heavy is imported, the process's fd 1 is
pointed at stderr and fd 0 at /dev/null; the transport gets private duplicates of the real
pipes. Whatever a dependency prints (onnxruntime, a warning, a stray `print`), and
whatever a child process writes, lands on stderr, never inside a JSON-RPC frame.
EOF on stdin or SIGTERM/SIGINT ends the server cleanly: exit 0, after the tool call in
flight, with the database closed.
"""

from __future__ import annotations

import fcntl
import os
import sys
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from hippo.core import Hippo


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's stdin and stdout (private fds), with fds 0 and 1 diverted."""
    sys.stdout.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(2, 1)  # sys.stdout (and any C library writing to fd 1) now reaches stderr
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(wire_in, "rb", buffering=0), os.fdopen(wire_out, "wb", buffering=0)


def serve(h: Hippo, **params: Any) -> None:
    """Serve `h` until EOF or a termination signal."""
    if sys.stdin.isatty():  # a person ran it by hand: say what it is waiting for
        sys.stderr.write("hippo: serving MCP on stdin/stdout for an agent's client "
                         "(docs/agents.md, MCP); Ctrl-D ends it\n")
    from hippo.mcp.params import McpParams
    from hippo.mcp.tools import Tools

    settings = McpParams.from_table(h.settings.table("mcp"), **params)  # 78 before serving
    wire_in, wire_out = claim_stdio()
    import anyio

    from hippo.mcp.server import build

    tools = Tools(h, settings)
    server = build(tools)
    # Warm up only now: started before the SDK's import, the model's load slowed
    # `initialize` from 1.7 s to 2.7 s here (GIL and import lock shared), for the same
    # time to the first search answer.
    tools.warm()
    stdin = anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8", write_through=True))

    async def main() -> None:
        import signal

        from mcp.server.stdio import stdio_server

        async with anyio.create_task_group() as tg:
            async def on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        # The stdin reader blocks in a worker thread that no cancellation
                        # reaches: close the database (after the tool call in flight, if
                        # any) and leave.
                        tools.close()
                        sys.stderr.flush()
                        os._exit(0)

            tg.start_soon(on_signal)
            lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does this
            async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()  # EOF: the client closed the pipe

    try:
        anyio.run(main)
    finally:
        tools.close()
