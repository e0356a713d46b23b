"""`hippo serve`: one user's warm process for one database, on a Unix socket.

It holds what a new process pays for on every call (Python's imports, Typer, the
embedding model, the Brain's vectors: `hippo.warm`) and runs the read commands clients
send (`hippo.serve.client`), one at a time, each in an environment built from the
client's variables, directory and streams, with a fresh connection to the store
(`hippo.serve.execute`); nothing process-wide is swapped for a call.

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
                 idle_s: float, db_file: str | None = None, auto: bool = False,
                 warm: Any = None, face: Any = None) -> None:
        self.identity = identity  # the database: its resolved path, or its URL's display
        self.shown = shown  # how messages name it (no password)
        self.db_file = db_file  # a SQLite file: the server exits once it is gone
        self.auto = auto  # started by a call, not a person: one such server per user
        self.files = files
        self.idle_s = idle_s
        self.warm = warm  # hippo.warm.Warm: what every call's environment is given
        self.face = face  # hippo.serve.execute.Face: the command line the calls run
        self.started = time.time()
        self.calls = 0
        self.refused: dict[str, int] = {}
        self.last = time.monotonic()
        self.stopping = ""  # why, once it stops
        self._run_lock = threading.Lock()
        self._lock_file: Any = None
        self._lock_path = ""
        self._made_way = False  # stopped for another automatic server: keep its .spawn
        self._sock: socket.socket | None = None
        self._inode = 0
        self._busy = 0  # calls being handled (under _count)
        self._count = threading.Lock()

    # -- life cycle -------------------------------------------------------------------
    def start(self) -> None:
        """Take the database's lock, bind the socket, say who we are; an automatic server
        then makes the user's other automatic servers stop."""
        base = self.files["dir"]
        address.check(base, create=True)
        self._take_lock(address.lock_path(base, self.identity))
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
        if self.auto:
            self._make_way()

    def _take_lock(self, path: str) -> None:
        """Hold `path` (flock) for our life; AlreadyRunning when another server does. A lock
        file removed while we waited for it (`spawn.sweep`) is taken again."""
        while True:
            fh = open(path, "a+")  # noqa: SIM115 - held for the server's life
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "?"
                fh.close()
                raise AlreadyRunning(holder) from None
            try:
                if os.fstat(fh.fileno()).st_ino == os.stat(path).st_ino:
                    break
            except FileNotFoundError:
                pass
            fh.close()
        fh.truncate(0)
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock_file, self._lock_path = fh, path

    def _make_way(self) -> None:
        """At most one automatic server per user: ask the others to stop (the newest one
        serves the database a call asked for last)."""
        import glob
        import json

        from hippo.serve import spawn

        for info in glob.glob(os.path.join(self.files["dir"], "*.json")):
            if info == self.files["json"]:
                continue
            try:
                with open(info) as fh:
                    other = json.load(fh)
            except (OSError, ValueError):
                continue
            if isinstance(other, dict) and other.get("auto") and other.get("socket"):
                spawn.ask({"sock": str(other["socket"])}, "stop", timeout=1.0,
                          reason="another automatic server started")

    def _write_info(self) -> None:
        import json

        from hippo import __version__

        info = {"pid": os.getpid(), "database": self.shown, "socket": self.files["sock"],
                "hippo": __version__, "protocol": wire.PROTOCOL, "started": self.started,
                "auto": self.auto}
        fd = os.open(self.files["json"] + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(info, fh)
        os.replace(self.files["json"] + ".tmp", self.files["json"])

    def close(self) -> None:
        """Remove our socket, info, log and (unless we made way for another automatic
        server: the once-a-minute start limit must hold) last start, only if still ours;
        remove the lock file and release it."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            if self._ours():
                names = ("sock", "json") + (("log",) if self.auto else ()) + \
                    (("spawn",) if self.auto and not self._made_way else ())
                for name in names:
                    with contextlib.suppress(OSError):
                        os.unlink(self.files[name])
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._lock_path)  # while held: a waiting server retakes the path
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
            elif self.db_file is not None and not os.path.exists(self.db_file):
                self._stop("its database file is gone")
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
            self._made_way = bool(request.get("reason"))
            self._stop(str(request.get("reason") or "asked to stop"))
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
                self._admit(request)
            except execute.Refused as exc:
                self._refuse(conn, exc.reason)
                return
            wire.send_json(conn, {"started": True})
            try:
                code, out, err, order = execute.run(request, stdin, self.warm, face=self.face)
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
            wire.send_json(conn, {"code": code, "order": order})
            wire.send(conn, out)
            wire.send(conn, err)
        finally:
            self._run_lock.release()

    def _admit(self, request: dict[str, Any]) -> None:
        """Refuse a call that cannot run here as in the client's process
        (`execute.admissible`), or whose settings, read in the client's variables, resolve
        to another database than ours or name a file relative to the client's cwd."""
        from hippo import config
        from hippo.errors import HippoError

        argv, environ = list(request["argv"]), dict(request["env"])
        execute.admissible(argv, environ, str(request["cwd"]))
        flag = execute.db_option(argv, self.face, self.warm)
        if flag != address.db_flag(argv):
            raise execute.Refused("argv")  # the client asked the server of another --db
        try:
            settings = config.load({"db": flag}, environ)
        except HippoError as exc:  # a bad config file: the client's own run says so
            raise execute.Refused("config", str(exc)) from None
        database = settings.database
        files = [settings.file, config.home_dir(environ)]
        if not isinstance(database, str):
            files.append(database)
        if any(not os.path.isabs(f) for f in files):
            raise execute.Refused("relative")  # read from the server's cwd, not the client's
        if identity(database) != self.identity:
            raise execute.Refused("database")

    def report(self) -> dict[str, Any]:
        from hippo import __version__

        held = self.warm.report() if self.warm is not None else {}
        return {"pid": os.getpid(), "database": self.shown, "socket": self.files["sock"],
                "hippo": __version__, "protocol": wire.PROTOCOL,
                "uptime_s": round(time.time() - self.started, 1), "calls": self.calls,
                "refused": dict(self.refused), "idle_exit_s": self.idle_s,
                "idle_s": round(time.monotonic() - self.last, 1), "auto": self.auto,
                "rss_mb": rss_mb(), **held}


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


def rss_mb() -> float | None:
    """This process's resident memory in MiB (Linux's /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
    except (OSError, ValueError, IndexError):
        try:
            import resource

            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return round(peak / (1 << 20 if sys.platform == "darwin" else 1 << 10), 1)
        except (ImportError, OSError):
            return None


def identity(database: Any) -> str:
    """What names a database for "one server per database": a file's resolved path, a
    server's URL without its password."""
    from hippo.config import display, is_server

    if is_server(database):
        return display(str(database))
    from pathlib import Path

    return str(Path(database).expanduser().resolve())


__all__ = ["AlreadyRunning", "Server", "identity", "rss_mb"]
