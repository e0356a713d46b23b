"""The database file on disk: its directory, mode and header, and the mark a corrupt file
leaves; the checks made before SQLite opens it and the reasons given when it cannot."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.errors import ConfigError, HippoError, NoDatabase

SQLITE_MAGIC = b"SQLite format 3\x00"
# Beside the database: the mark a corrupt file leaves until `hippo doctor --fix` repairs it.
CORRUPT_SUFFIX = "-corrupt"

if TYPE_CHECKING:
    from hippo.store.base import Mode


def _filesystem_state(path: Path | str) -> str | None:
    """"read-only" or "full" when the database's file system is, else None."""
    try:
        st = os.statvfs(Path(path).parent)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return "read-only"
    return "full" if st.f_bavail == 0 else None



def _has_magic(path: Path | str) -> bool:
    """True when the file starts as every SQLite database does (or cannot be read)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError:
        return True
    return not head or head == SQLITE_MAGIC



def _denied(path: Path, want: int) -> bool:
    return path.exists() and not os.access(path, want)



def unwritable(directory: Path) -> str | None:
    """Why files cannot be created in `directory` (None: they can), with the fix."""
    if os.access(directory, os.W_OK | os.X_OK):
        return None
    if _filesystem_state(directory) == "read-only":
        return f"directory {directory} is on a read-only file system; mount it read-write"
    try:
        st = directory.stat()
    except OSError:
        return None
    euid = os.geteuid()
    if (st.st_uid == euid and st.st_mode & stat.S_IWUSR) or (euid == 0 and st.st_uid != 0):
        # The mode allows it, the kernel does not: an immutable (or append-only) directory.
        return (f"directory {directory} is immutable: `lsattr -d {directory}` shows an `i`, "
                f"`chattr -i {directory}` (as root) clears it")
    return (f"directory {directory} is not writable by you (mode {_mode(directory)}): "
            f"`chmod u+w {directory}` or choose another --db")



def _why_read_only(path: Path | str) -> str:
    """Why SQLite could not write: the file's mode, its WAL's, the directory, the mount."""
    p = Path(path)
    if _filesystem_state(p) == "read-only":
        return ": its file system is mounted read-only"
    if _denied(p, os.W_OK):
        return f": the file is not writable by you (mode {_mode(p)}): `chmod u+w {p}`"
    for side in (Path(f"{p}-wal"), Path(f"{p}-shm")):
        if _denied(side, os.W_OK):
            return f": {side.name} beside it is not writable by you: `chmod u+w {side}`"
    reason = unwritable(p.parent)
    return f": {reason}" if reason else ""



def _why_cannot_open(path: Path | str) -> str:
    """The reason SQLite gave none for: a file, or its WAL beside it, that this user may
    not read or write, or a directory where the WAL cannot be created."""
    p = Path(path)
    if _denied(p, os.R_OK):
        return f": the file is not readable by you (mode {_mode(p)}); `chmod u+rw {p}`"
    for side in (Path(f"{p}-wal"), Path(f"{p}-shm")):
        if _denied(side, os.R_OK | os.W_OK):
            return (f": {side.name} beside it is not readable and writable by you; "
                    f"`chmod u+rw {side}`")
    missing = [x.name for x in (Path(f"{p}-wal"), Path(f"{p}-shm")) if not x.exists()]
    reason = unwritable(p.parent)
    if missing and reason:
        return (f": hippo keeps its write-ahead log ({' and '.join(missing)}) beside it, and "
                f"{reason}")
    return f": {reason}" if reason else ""



def _mode(p: Path) -> str:
    try:
        return f"{stat.S_IMODE(p.stat().st_mode):04o}"
    except OSError:
        return "unknown"



def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


# -- the files beside the database -------------------------------------------------------


def corrupt_marker(path: Path | str) -> Path:
    return Path(f"{path}{CORRUPT_SUFFIX}")



def mark_corrupt(path: Path | str, reason: str) -> None:
    """Leave the mark that makes writes refuse this file until `hippo doctor --fix` (best
    effort: a read-only directory keeps no mark, and SQLite still reports the damage)."""
    if str(path) == ":memory:":
        return

    marker = corrupt_marker(path)
    with contextlib.suppress(OSError):
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as fh:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            fh.write(f"{stamp} {' '.join(reason.split())[:500]}\n")



def clear_corrupt(path: Path | str) -> None:
    with contextlib.suppress(FileNotFoundError):
        corrupt_marker(path).unlink()



def _refuse_marked(path: Path) -> None:
    """A write into a file found corrupt would bury good rows under new ones: refuse."""
    marker = corrupt_marker(path)
    try:
        note = marker.read_text(errors="replace").strip()
    except FileNotFoundError:
        return
    except OSError:
        note = ""
    when = f" ({note[:200]})" if note else ""
    raise HippoError(f"database {path} was found corrupt{when}; writes are refused until "
                     "`hippo doctor --fix` salvages it into a new file")



def check_private_dir(directory: Path) -> None:
    """Refuse a directory other users can write: they could plant the database, its WAL,
    or a config file that hippo would read (and the session-start hook inject)."""
    try:
        st = directory.stat()
    except OSError:
        return
    if not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return
    mode = f"{stat.S_IMODE(st.st_mode):04o}"
    if st.st_mode & stat.S_ISVTX:  # /tmp and the like: not yours to chmod
        fix = "choose a --db (and HIPPO_HOME) in a directory only you can write"
    else:
        fix = f"run `chmod go-w {directory}`"
    raise ConfigError(f"directory {directory} is writable by other users (mode {mode}), who "
                      f"could plant files hippo reads; {fix}")



def tighten(path: Path) -> None:
    """Make the database and its -wal/-shm user-only (0600), with one warning line."""
    changed, old, new = [], "", ""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o077:
            continue
        old = old or f"{stat.S_IMODE(st.st_mode):04o}"
        private = stat.S_IMODE(st.st_mode) & 0o700  # others' bits go; the owner's stay
        try:
            os.chmod(p, private)
        except OSError as exc:
            sys.stderr.write(f"hippo: warning: {p} is readable by other users (mode {old}) "
                             f"and cannot be made private: {_os_reason(exc)}\n")
            return
        changed.append(p.name)
        new = f"{private:04o}"
    if changed:
        were = "was" if len(changed) == 1 else "were"
        sys.stderr.write(f"hippo: warning: {', '.join(changed)} {were} open to other users "
                         f"(mode {old}); made user-only ({new})\n")



def _prepare(path: Path, mode: Mode, check: bool) -> None:
    """Before SQLite sees the file: the directory, the file's existence, mode and marks."""
    directory = path.parent
    if not directory.is_dir():
        if mode == "read":
            raise NoDatabase(f"no database at {path} yet: nothing stored (`hippo add` or "
                             "`hippo ingest` creates it)")
        raise HippoError(f"directory {directory} does not exist; create it or choose another --db")
    if check:
        check_private_dir(directory)
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise HippoError(f"cannot read database {path}: {_os_reason(exc)}") from None
    if st is None:
        if mode == "read":
            raise NoDatabase(f"no database at {path} yet: nothing stored (`hippo add` or "
                             "`hippo ingest` creates it)")
        try:  # created user-only: memories and transcripts are private
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise HippoError(_cannot_create(path, exc)) from None
        os.close(fd)
        return
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path} is not a regular file; choose another --db")
    if mode == "write":
        _refuse_marked(path)



def _cannot_create(path: Path, exc: OSError) -> str:
    reason = unwritable(path.parent)
    if reason:
        return f"cannot create database {path}: {reason}"
    return f"cannot create database {path}: {_os_reason(exc)}; choose another --db"
