"""`hippo serve`: one user's warm process for one database, on a Unix socket.

It holds what a new process pays for on every call (Python's imports, Typer, the
embedding model, the Brain's vectors: `hippo.warm`) and runs the read commands clients
send (`hippo.serve.client`), one at a time, each in the client's environment and
directory with a fresh connection to the store (`hippo.serve.execute`).

Only the user's own processes are answered (the directory is 0700, the socket 0600, and
the peer's uid is checked on every connection), only calls for the server's own database
(each call's settings are resolved and compared), only clients of the same protocol and
hippo version. One server per database: it holds `db-<hash>.lock` for its life. It exits
after `idle` seconds without a call, on SIGTERM/SIGINT, on `hippo serve --stop`, when its
socket file is removed or replaced, and when a client of a newer protocol or hippo calls
(an upgrade: the next call starts a current server; an older client is only refused).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import socket
import sys
import threading
import time
from typing import Any

from hippo.serve import address, execute, wire

POLL_S = 0.5  # how often the accept loop looks at the clock, the signals and its socket


class AlreadyRunning(Exception):
    """Another server holds this database's lock."""


class Server:
    """A bound, listening server (`start`), serving until it has a reason to stop."""

    def __init__(self, *, identity: str, shown: str, files: dict[str, str],
                 idle_s: float) -> None:
        self.identity = identity  # the database: its resolved path, or its URL's display
        self.shown = shown  # how messages name it (no password)
        self.files = files
        self.idle_s = idle_s
        self.started = time.time()
        self.calls = 0
        self.refused: dict[str, int] = {}
        self.last = time.monotonic()
        self.stopping = ""  # why, once it stops
        self._run_lock = threading.Lock()
        self._lock_file: Any = None
        self._sock: socket.socket | None = None
        self._inode = 0
        self._busy = 0  # calls being handled (under _count)
        self._count = threading.Lock()

    # -- life cycle -------------------------------------------------------------------
    def start(self) -> None:
        """Take the database's lock, bind the socket, say who we are."""
        base = self.files["dir"]
        address.check(base, create=True)
        self._lock_file = open(address.lock_path(base, self.identity), "a+")  # noqa: SIM115
        try:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.seek(0)
            holder = self._lock_file.read().strip() or "?"
            self._lock_file.close()
            raise AlreadyRunning(holder) from None
        self._lock_file.truncate(0)
        self._lock_file.write(str(os.getpid()))
        self._lock_file.flush()
        path = self.files["sock"]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a stale socket: its server is gone (we hold the lock)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(old)
        sock.listen(64)
        self._sock = sock
        self._inode = os.stat(path).st_ino
        self._write_info()

    def _write_info(self) -> None:
        import json

        from hippo import __version__

        info = {"pid": os.getpid(), "database": self.shown, "socket": self.files["sock"],
                "hippo": __version__, "protocol": wire.PROTOCOL, "started": self.started}
        fd = os.open(self.files["json"] + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(info, fh)
        os.replace(self.files["json"] + ".tmp", self.files["json"])

    def close(self) -> None:
        """Remove our socket and info (only if still ours), release the lock."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            if self._ours():
                for name in ("sock", "json"):
                    with contextlib.suppress(OSError):
                        os.unlink(self.files[name])
        if self._lock_file is not None:
            self._lock_file.close()  # releases the flock
            self._lock_file = None

    def _ours(self) -> bool:
        try:
            return os.stat(self.files["sock"]).st_ino == self._inode
        except OSError:
            return False

    def serve(self) -> str:
        """Accept calls until a reason to stop; the reason."""
        assert self._sock is not None
        signals = {signal.SIGTERM: "SIGTERM", signal.SIGINT: "SIGINT"}
        for number, name in signals.items():
            signal.signal(number, lambda *_a, _n=name: self._stop(_n))
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        while not self.stopping:
            for _ in selector.select(POLL_S):
                self._accept()
            if self._busy == 0 and time.monotonic() - self.last > self.idle_s:
                self._stop(f"idle for {self.idle_s / 60:g} min")
            elif not self._ours():
                self._stop("its socket file was removed or replaced")
        with self._run_lock:  # the call in flight, if any, ends first
            selector.close()
        return self.stopping

    def _stop(self, why: str) -> None:
        if not self.stopping:
            self.stopping = why

    # -- calls ------------------------------------------------------------------------
    def _accept(self) -> None:
        assert self._sock is not None
        try:
            conn, _ = self._sock.accept()
        except OSError:
            return
        with self._count:
            self._busy += 1
        threading.Thread(target=self._handle, args=(conn,), daemon=True,
                         name="hippo-serve-call").start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            if wire.peer_uid(conn) not in (None, os.geteuid()):
                return  # another user's process: not a word
            request = wire.recv_json(conn, time.monotonic() + 10)
            self._answer(conn, request)
        except (wire.Closed, OSError):
            pass  # the client gave up or went away: it runs the call itself
        except Exception as exc:  # noqa: BLE001 - a malformed request: one line in our log
            from hippo.errors import scrub

            sys.stderr.write(scrub(f"hippo serve: a request was dropped: "
                                   f"{type(exc).__name__}: {exc}\n"))
        finally:
            conn.close()
            self.last = time.monotonic()
            with self._count:
                self._busy -= 1

    def _answer(self, conn: socket.socket, request: dict[str, Any]) -> None:
        from hippo import __version__

        if request.get("protocol") != wire.PROTOCOL or request.get("hippo") != __version__:
            self._refuse(conn, "version")
            if _newer(request, __version__):  # an upgrade: make way for a current server
                self._stop(f"a client of hippo {request.get('hippo')!r} (protocol "
                           f"{request.get('protocol')!r}) called; this is {__version__}")
            return
        op = request.get("op")
        if op == "status":
            wire.send_json(conn, self.report())
        elif op == "stop":
            wire.send_json(conn, {"stopping": True, "pid": os.getpid()})
            self._stop("asked to stop")
        elif op == "run":
            self._run(conn, request)
        else:
            self._refuse(conn, "op")

    def _refuse(self, conn: socket.socket, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1
        wire.send_json(conn, {"refused": reason})

    def _run(self, conn: socket.socket, request: dict[str, Any]) -> None:
        stdin = wire.recv(conn, time.monotonic() + 10) if request.get("stdin") else b""
        start_by = float(request.get("start_by") or 0)
        if self.stopping or not self._run_lock.acquire(timeout=max(0.0, start_by - time.time())):
            self._refuse(conn, "stopping" if self.stopping else "busy")
            return
        try:
            if time.time() > start_by:
                self._refuse(conn, "busy")
                return
            try:
                with execute.client_process(request["env"], request["cwd"]):
                    self._admit(request)
            except execute.Refused as exc:
                self._refuse(conn, exc.reason)
                return
            wire.send_json(conn, {"started": True})
            try:
                code, out, err = execute.run(request, stdin)
            except execute.Refused as exc:
                self._refuse(conn, exc.reason)
                return
            except BaseException as exc:  # noqa: BLE001 - our own failure: the client runs it
                from hippo.errors import scrub

                sys.stderr.write(scrub(f"hippo serve: a call failed here: "
                                       f"{type(exc).__name__}: {exc}\n"))
                self._refuse(conn, "error")
                return
            self.calls += 1
            wire.send_json(conn, {"code": code})
            wire.send(conn, out)
            wire.send(conn, err)
        finally:
            self._run_lock.release()

    def _admit(self, request: dict[str, Any]) -> None:
        """Refuse a call whose settings resolve to another database than ours."""
        from hippo import config
        from hippo.errors import HippoError

        try:
            settings = config.load({"db": address.db_flag(list(request["argv"]))})
        except HippoError as exc:  # a bad config file: the client's own run says so
            raise execute.Refused("config", str(exc)) from None
        if identity(settings.database) != self.identity:
            raise execute.Refused("database")

    def report(self) -> dict[str, Any]:
        from hippo import __version__, warm

        held = warm.ACTIVE.report() if warm.ACTIVE is not None else {}
        return {"pid": os.getpid(), "database": self.shown, "socket": self.files["sock"],
                "hippo": __version__, "protocol": wire.PROTOCOL,
                "uptime_s": round(time.time() - self.started, 1), "calls": self.calls,
                "refused": dict(self.refused), "idle_exit_s": self.idle_s,
                "idle_s": round(time.monotonic() - self.last, 1), **held}


def _newer(request: dict[str, Any], version: str) -> bool:
    """Whether the client is of a newer protocol or hippo than this server. An older one is
    only refused: two installs of different versions must not stop each other's server
    in turn, and the newer one's server is the one to keep."""
    def parts(text: Any) -> tuple[int, ...] | None:
        try:
            return tuple(int(p) for p in str(text).split("."))
        except ValueError:
            return None

    theirs, ours = parts(request.get("hippo")), parts(version)
    protocol = request.get("protocol")
    if isinstance(protocol, int) and protocol != wire.PROTOCOL:
        return protocol > wire.PROTOCOL
    return theirs is not None and ours is not None and theirs > ours


def identity(database: Any) -> str:
    """What names a database for "one server per database": a file's resolved path, a
    server's URL without its password."""
    from hippo.store.location import display, is_server

    if is_server(database):
        return display(str(database))
    from pathlib import Path

    return str(Path(database).expanduser().resolve())


__all__ = ["AlreadyRunning", "Server", "identity"]
