"""Starting, stopping and asking the warm server: `[serve]` settings, the detached start a
call makes when it found no server, and what `hippo serve --stop/--status` send."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from hippo.errors import ConfigError
from hippo.serve import address, wire

RESPAWN_S = 60.0  # a call starts a server at most this often (one that cannot start...)
READY_S = 15.0  # `hippo serve --detach` waits this long for the socket to answer
AUTO_ENV = "HIPPO_SERVE_AUTO"  # set for a server a call started (not a person)


@dataclass(frozen=True, slots=True)
class ServeParams:
    """`[serve]` in the config file (docs/serve.md)."""

    auto_start: bool = True  # a call that finds no server starts one for the next call
    idle_minutes: float = 30.0  # the server exits after this long without a call
    vector_memory_mb: float = 1024.0  # at most this much of one store's vectors in memory

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> ServeParams:
        p = cls(**table)
        if not isinstance(p.auto_start, bool):
            raise ConfigError(f"[serve] auto_start must be true or false, got {p.auto_start!r}")
        for name in ("idle_minutes", "vector_memory_mb"):
            value = getattr(p, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"[serve] {name} must be a number > 0, got {value!r}")
        return p


def files_for(flag: str | None) -> dict[str, str]:
    """The server files of the database this process's `--db` flag (or none) names."""
    return address.paths(address.key(address.spec(flag, os.environ, _cwd())))


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD") or "/"


def auto_start(argv: list[str]) -> None:
    """A call found no server for its database: start one, unless `[serve] auto_start` is
    off, the database does not exist, or a start was tried in the last RESPAWN_S seconds.
    The server it starts is the user's one automatic server: it makes the others stop."""
    from hippo import config
    from hippo.config import is_server

    flag = address.db_flag(argv)
    settings = config.load({"db": flag})
    if not ServeParams.from_table(settings.table("serve")).auto_start:
        return
    if not is_server(settings.database) and not os.path.isfile(settings.database):
        return  # nothing to serve (a typo, a deleted test database): no server for it
    files = files_for(flag)
    try:
        address.check(files["dir"], create=True)
        if time.time() - os.stat(files["spawn"]).st_mtime < RESPAWN_S:
            return
    except FileNotFoundError:
        pass
    except (OSError, address.Unsafe):
        return
    sweep(files["dir"])
    fd = os.open(files["spawn"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    os.utime(files["spawn"])
    launch(flag, files, auto=True)


def sweep(base: str) -> None:
    """Remove what servers gone for longer than RESPAWN_S left in `base`: their last start
    (`.spawn`) and their log, and database locks nobody holds."""
    import fcntl

    now = time.time()
    for name in os.listdir(base):
        path = os.path.join(base, name)
        stem, _, kind = name.rpartition(".")
        try:
            if kind == "spawn" and now - os.stat(path).st_mtime > RESPAWN_S and \
                    not os.path.lexists(os.path.join(base, stem + ".sock")):
                for gone in (path, os.path.join(base, stem + ".log")):
                    with _quiet():
                        os.unlink(gone)
            elif kind == "lock" and stem.startswith("db-"):
                with open(path, "a") as fh:  # held: its server runs; else nobody's
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    os.unlink(path)  # (a server takes a lock only if still its path's file)
        except OSError:
            continue


def _quiet() -> Any:
    import contextlib

    return contextlib.suppress(FileNotFoundError)


def launch(flag: str | None, files: dict[str, str], *,
           idle_minutes: float | None = None, auto: bool = False) -> int:
    """Start `hippo serve` detached from this process (its own session, stdin and stdout
    on /dev/null, stderr to the server's log); its pid. The database travels in its
    environment (`HIPPO_DB`), never in its argv: any local user's `ps` shows an argv, and
    a server's URL may hold a password."""
    import subprocess

    env = dict(os.environ)
    if flag is not None:
        env["HIPPO_DB"] = flag
    env.pop(AUTO_ENV, None)
    if auto:  # the user's one automatic server (docs/serve.md)
        env[AUTO_ENV] = "1"
    argv = [sys.executable, "-m", "hippo", "serve"]
    if idle_minutes is not None:
        argv += ["--idle-minutes", repr(float(idle_minutes))]
    log = os.open(files["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=log, start_new_session=True, close_fds=True,
                                 cwd=_cwd(), env=env)
    finally:
        os.close(log)
    return child.pid


def ask(files: dict[str, str], op: str, timeout: float = 2.0,
        **extra: Any) -> dict[str, Any] | None:
    """Send `op` (status, stop) to the server; its answer, or None when none answers."""
    from hippo import __version__

    sock = wire.dial(files["sock"], timeout)
    if isinstance(sock, str):
        return None
    try:
        wire.send_json(sock, {"protocol": wire.PROTOCOL, "hippo": __version__, "op": op,
                              **extra})
        return wire.recv_json(sock, time.monotonic() + timeout)
    except (OSError, wire.Closed):
        return None
    finally:
        sock.close()


def wait_for(files: dict[str, str], *, up: bool, timeout: float = READY_S) -> bool:
    """Wait until a server answers at `files` (`up`) or none does; whether it happened."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        answer = ask(files, "status", timeout=0.5)
        if (answer is not None and "pid" in answer) == up:
            return True
        time.sleep(0.05)
    return False


__all__ = ["AUTO_ENV", "ServeParams", "ask", "auto_start", "files_for", "launch", "sweep",
           "wait_for"]
