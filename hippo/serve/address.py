"""Where a warm server listens: a per-user directory, one socket per database.

The directory is `$XDG_RUNTIME_DIR/hippo` when that variable names a directory of the
(effective) user's own, else `/tmp/hippo-<uid>`; it must be a real directory (not a symlink) of the user's own, mode
0700, or nothing is served from it. In it, for each database:

- `<key>.sock`, the socket (0600), `<key>.json` what the server says about itself,
  `<key>.log` its stderr, `<key>.spawn` the time of the last automatic start;
- `db-<hash>.lock`, held (flock) by the one server of a database.

`key` is a hash of what the client was given to find its database (a --db flag, else
HIPPO_DB, else the environment that locates the home directory and config file), read
without loading settings: the client's fast path must not import them. The server
resolves the real database for each request and refuses one that is not its own, so a
key that two databases could share costs a fall-back, never a wrong answer.

A socket path is at most 107 bytes: a runtime directory too deep for one falls back to
`/tmp/hippo-<uid>`. Nothing here imports more than `os`, `stat` and `_blake2`.
"""

from __future__ import annotations

import os
import stat

SOCKET_MAX = 107  # sun_path holds 108 bytes, the last one a NUL
# The environment that decides where the default database and the config file are.
HOME_VARS = ("HIPPO_HOME", "HIPPO_CONFIG", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")


class Unsafe(Exception):
    """The runtime directory is not the user's own private directory."""


def db_flag(argv: list[str]) -> str | None:
    """The value of the last `--db` option in `argv` before any `--` (a command's --db wins
    over the root's)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--db" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--db="):
            found = arg[5:]
    return found


def spec(flag: str | None, env: dict[str, str] | os._Environ[str], cwd: str) -> str:
    """What locates the database, as one string: an absolute path, a URL, or the home
    directory's environment."""
    given = flag if flag is not None else env.get("HIPPO_DB")
    if given:
        low = given[:13].lower()
        if low.startswith(("postgresql://", "postgres://")):
            return "url:" + given
        return "path:" + os.path.normpath(os.path.join(cwd, os.path.expanduser(given)))
    return "home:" + "\0".join(env.get(name, "") for name in HOME_VARS)


def key(db_spec: str) -> str:
    try:  # the C module itself: hashlib would load OpenSSL first (3 ms of every call)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b
    return blake2b(db_spec.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


FALLBACK = "/tmp/hippo-{uid}"  # (a template: tests point it elsewhere)


def directory(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The runtime directory of this user's servers (not checked, not created).

    `XDG_RUNTIME_DIR` counts only when it is a directory of the effective user's own: root
    with a user's environment (`sudo -E`, `su` without `-`) must not put a root-owned
    directory, socket or server into that user's runtime directory."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    uid = os.geteuid()
    if runtime and os.path.isabs(runtime):
        path = os.path.join(runtime, "hippo")
        if len(os.path.join(path, "x" * 24 + ".sock").encode()) <= SOCKET_MAX:
            try:
                if os.stat(runtime).st_uid == uid:
                    return path
            except OSError:
                pass
    return FALLBACK.format(uid=uid)


def check(path: str, *, create: bool = False) -> None:
    """Make sure `path` is the user's own 0700 directory (created with `create`); Unsafe
    otherwise. A directory of the user's own with looser bits is tightened."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    st = os.lstat(path)  # FileNotFoundError: no server has run here
    if not stat.S_ISDIR(st.st_mode):
        raise Unsafe(f"{path} is not a directory")
    if st.st_uid != os.geteuid():
        raise Unsafe(f"{path} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)


def owned_socket(path: str) -> bool:
    """True when `path` is a socket of the user's own (a client's check before it
    connects: a socket file another user put there is never trusted)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.geteuid()


def paths(db_key: str, env: dict[str, str] | os._Environ[str] | None = None) -> dict[str, str]:
    """The files of the server for `db_key`."""
    base = directory(env)
    return {"dir": base, **{kind: os.path.join(base, f"{db_key}.{kind}")
                            for kind in ("sock", "json", "log", "spawn")}}


def lock_path(base: str, identity: str) -> str:
    """The lock file that keeps one server per database (`identity`: its resolved path or
    its URL without the password)."""
    return os.path.join(base, f"db-{key('db:' + identity)}.lock")


__all__ = ["Unsafe", "check", "db_flag", "directory", "key", "lock_path", "owned_socket",
           "paths", "spec"]
