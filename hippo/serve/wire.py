"""The warm server's protocol: length-prefixed frames over a Unix socket.

A frame is a 4-byte big-endian length and that many bytes; a message is a JSON object in
one frame, raw bytes (stdin, stdout, stderr) travel in frames of their own.

    client → server   {"protocol": 1, "hippo": VERSION, "op": "run", "argv": [...], "cwd",
                       "env", "start_by", "streams", "stdin": bool}  [stdin bytes]
    server → client   {"started": true} | {"refused": REASON}      (within start_by)
                      {"code": N}  stdout-bytes  stderr-bytes       (the command's end)

`op` may also be "status" (answered with the server's report) or "stop". A server answers
only a client of its own protocol and hippo version (it runs its own code: another
version's output could differ): any other gets `{"refused": "version"}` and falls back.
REASON is one word (version, busy, database, cwd, error, stopping) the client may log.
"""

from __future__ import annotations

# The C module: `socket` imports enum, selectors and more, 4 ms of every client's call;
# everything here needs only its socket type, constants and errors.
import _socket as socket
import struct
import time

TYPE_CHECKING = False  # not typing's: importing typing costs every served call 3 ms
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
MAX_FRAME = 256 << 20  # a frame longer than this is a broken peer, not a big answer
_LEN = struct.Struct(">I")


class Closed(Exception):
    """The peer closed the connection, sent garbage, or missed the deadline."""


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_LEN.pack(len(payload)) + payload)


def send_json(sock: socket.socket, message: dict[str, Any]) -> None:
    import json

    send(sock, json.dumps(message, separators=(",", ":")).encode())


def recv(sock: socket.socket, deadline: float | None = None) -> bytes:
    """One frame; Closed on EOF, a bad length, or `deadline` (time.monotonic) passing."""
    (size,) = _LEN.unpack(_exactly(sock, 4, deadline))
    if size > MAX_FRAME:
        raise Closed(f"frame of {size} bytes")
    return _exactly(sock, size, deadline)


def recv_json(sock: socket.socket, deadline: float | None = None) -> dict[str, Any]:
    import json

    try:
        message = json.loads(recv(sock, deadline))
    except ValueError as exc:
        raise Closed(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise Closed("not a JSON object")
    return message


def _exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise Closed("deadline passed")
            sock.settimeout(wait)
        try:
            chunk = sock.recv(min(left, 1 << 20))
        except TimeoutError:
            raise Closed("deadline passed") from None
        except OSError as exc:
            raise Closed(str(exc)) from None
        if not chunk:
            raise Closed("connection closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def dial(path: str, timeout: float) -> socket.socket | str:
    """A connection to the server at `path`, checked to be the user's own on both ends (the
    socket file, then the peer's uid); else why not: "absent" (no socket, or a stale one
    nobody listens on) or "owner"."""
    import os

    from hippo.serve.address import owned_socket

    if not owned_socket(path):
        return "absent" if not os.path.lexists(path) else "owner"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        if peer_uid(sock) not in (None, os.geteuid()):
            sock.close()
            return "owner"
    except OSError:
        sock.close()
        return "absent"  # a stale socket file: its server is gone
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The effective uid of the process at the other end (Linux SO_PEERCRED), None where
    unknown."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


__all__ = ["MAX_FRAME", "PROTOCOL", "Closed", "dial", "peer_uid", "recv", "recv_json", "send",
           "send_json"]
