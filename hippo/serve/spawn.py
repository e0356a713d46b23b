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
    off or a start was tried in the last RESPAWN_S seconds."""
    from hippo import config

    flag = address.db_flag(argv)
    settings = config.load({"db": flag})
    if not ServeParams.from_table(settings.table("serve")).auto_start:
        return
    files = files_for(flag)
    try:
        address.check(files["dir"], create=True)
        if time.time() - os.stat(files["spawn"]).st_mtime < RESPAWN_S:
            return
    except FileNotFoundError:
        pass
    except (OSError, address.Unsafe):
        return
    fd = os.open(files["spawn"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    os.utime(files["spawn"])
    launch(flag, files)


def launch(flag: str | None, files: dict[str, str], *,
           idle_minutes: float | None = None) -> int:
    """Start `hippo serve` detached from this process (its own session, stdin and stdout
    on /dev/null, stderr to the server's log); its pid. The database travels in its
    environment (`HIPPO_DB`), never in its argv: any local user's `ps` shows an argv, and
    a server's URL may hold a password."""
    import subprocess

    env = dict(os.environ)
    if flag is not None:
        env["HIPPO_DB"] = flag
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


def ask(files: dict[str, str], op: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """Send `op` (status, stop) to the server; its answer, or None when none answers."""
    from hippo import __version__

    sock = wire.dial(files["sock"], timeout)
    if isinstance(sock, str):
        return None
    try:
        wire.send_json(sock, {"protocol": wire.PROTOCOL, "hippo": __version__, "op": op})
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


__all__ = ["ServeParams", "ask", "auto_start", "files_for", "launch", "wait_for"]
