"""Connect to the one SQLite file (apsw + sqlite-vec, WAL, busy timeout) and run transactions."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import apsw

from hippo.errors import BusyError, ConfigError, CorruptDatabase, HippoError, NoDatabase

Row = dict[str, Any]
Mode = Literal["write", "read"]

SQLITE_MAGIC = b"SQLite format 3\x00"
# Beside the database: the mark a corrupt file leaves until `hippo doctor --fix` repairs it.
CORRUPT_SUFFIX = "-corrupt"
# A read command's cache write waits this long for the write lock, then is skipped.
CACHE_WAIT_MS = 0
# A hook's own deadline for a read: in WAL mode only a crash recovery or a WAL reset by
# another process can make a reader wait, never a writer; an agent waits for no more.
HOOK_WAIT_MS = 1000


def _vec_extension_path() -> str:
    # Importing sqlite_vec pulls in numpy (~0.15 s); find its loadable file without importing it.
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("sqlite-vec is not installed; reinstall hippo (pip install hippo)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def translate(exc: BaseException, path: Path | str) -> HippoError:
    """Turn an apsw error into one clear hippo error (what went wrong, what to do)."""
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return BusyError(f"database {path} is busy (another hippo is writing); try again")
    if isinstance(exc, apsw.NotADBError) and not _has_magic(path):
        return ConfigError(f"{path} is not a SQLite database (it does not start with SQLite's "
                           "header), so not hippo's; choose another --db (or HIPPO_DB); if it "
                           "was hippo's, its header is destroyed: restore it from a backup")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        mark_corrupt(path, str(exc))
        return CorruptDatabase(f"database {path} is corrupt ({exc}); `hippo doctor --fix` "
                               "salvages every readable row into a new file (`hippo export "
                               "--salvage` exports them)")
    if isinstance(exc, apsw.FullError):
        return HippoError(f"disk full while writing {path}; nothing from this command was stored")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return HippoError(f"database {path} is read-only{_why_read_only(path)}; nothing from "
                          "this command was stored")
    if isinstance(exc, (apsw.CantOpenError, apsw.IOError)):
        # Opening needs the WAL and its index beside the file: say why that failed.
        where = _filesystem_state(path)
        if where == "read-only":
            return HippoError(f"database {path} is on a read-only file system (hippo keeps its "
                              "write-ahead log beside it); mount it read-write")
        if where == "full":
            return HippoError(f"disk full at {path}; free some space and try again; nothing "
                              "from this command was stored")
    if isinstance(exc, apsw.CantOpenError):
        return HippoError(f"cannot open database {path}{_why_cannot_open(path)}")
    if isinstance(exc, apsw.IOError):
        return HippoError(f"I/O error on database {path}: {exc}")
    return HippoError(f"database error on {path}: {exc}")


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
    import time

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


def skippable(exc: BaseException) -> bool:
    """A cache write a read command may skip: the file is busy (another process writes) or
    cannot be written here (read-only file, directory or file system)."""
    kinds = (apsw.BusyError, apsw.LockedError, apsw.ReadOnlyError, apsw.PermissionsError)
    return (isinstance(exc, (BusyError, *kinds))
            or (isinstance(exc, HippoError) and isinstance(exc.__cause__, kinds)))


class Database:
    """One open connection with the helpers every store module uses."""

    def __init__(self, conn: apsw.Connection, path: Path, busy_timeout_ms: int = 5000,
                 mode: Mode = "write") -> None:
        self.conn = conn
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        # "read": opened by a read command; its writes are cache writes that never wait.
        self.mode: Mode = mode
        self._reader: Database | None = None

    # -- queries -------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> apsw.Cursor:
        try:
            return self.conn.execute(sql, params)
        except apsw.Error as exc:
            if isinstance(exc, (apsw.SQLError, apsw.ConstraintError, apsw.MismatchError)):
                raise
            raise translate(exc, self.path) from exc

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        cur = self.execute(sql, params)
        try:
            names = [d[0] for d in cur.getdescription()]
        except apsw.ExecutionCompleteError:  # the statement returned no rows at all
            return []
        try:  # a damaged page may show only once the rows are stepped through
            return [dict(zip(names, r)) for r in cur.fetchall()]
        except (apsw.CorruptError, apsw.NotADBError, apsw.IOError, apsw.BusyError) as exc:
            raise translate(exc, self.path) from exc

    def row(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        cur = self.execute(sql, params)
        try:
            r = cur.fetchone()
        except (apsw.CorruptError, apsw.NotADBError, apsw.IOError, apsw.BusyError) as exc:
            raise translate(exc, self.path) from exc
        return r[0] if r else None

    # -- transactions --------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Database]:
        """BEGIN IMMEDIATE (a writer takes the lock up front); savepoint when nested."""
        if self.conn.in_transaction:
            with self.conn:  # apsw: savepoint inside an open transaction
                yield self
            return
        if self.mode == "read":  # a cache write: skipped (BusyError) rather than waited for
            self.conn.set_busy_timeout(CACHE_WAIT_MS)
            try:
                self.execute("BEGIN IMMEDIATE")
            finally:
                self.conn.set_busy_timeout(self.busy_timeout_ms)
        else:
            self.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")
            raise
        try:
            self.conn.execute("COMMIT")
        except apsw.Error as exc:
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")
            raise translate(exc, self.path) from exc

    def cache_write(self, write: Callable[[Database], Any]) -> bool:
        """Run `write` in a transaction; for a read command, best effort: skipped when the
        file is busy or read-only (a cache is worth no wait). True when it was written."""
        if self.mode != "read":
            with self.transaction():
                write(self)
            return True
        try:
            with self.transaction():
                write(self)
        except (HippoError, apsw.Error) as exc:
            if skippable(exc):
                return False
            raise
        return True

    def checkpoint(self) -> bool:
        """Move the WAL into the file and truncate it (a purge leaves no old page behind);
        False when a reader kept it busy past the timeout: the WAL still holds old pages."""
        row = self.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not row or row[0] == 0

    def reader(self) -> Database | None:
        """A second connection to the same file, for a read that runs in another thread
        while this one works (SQLite releases the GIL). Opened once, closed with this one.

        None when there is no second view of the same data: an in-memory database, or an
        open transaction on this connection (another connection would not see its writes).
        """
        if self.conn.in_transaction or str(self.path) == ":memory:":
            return None
        if self._reader is None:
            try:
                self._reader = connect(self.path, busy_timeout_ms=self.busy_timeout_ms,
                                       mode="read", check=False)
            except HippoError:
                return None
        return self._reader

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self.conn.close()


def connect(path: Path, *, busy_timeout_ms: int = 5000, mode: Mode = "write",
            check: bool = True, migrate: bool = True) -> Database:
    """Open the database, load sqlite-vec; refuse a file that is not hippo's.

    mode "write" creates the file (user-only), switches it to WAL and applies migrations.
    mode "read" (search, list, show, ...) never creates, migrates or converts anything: a
    missing or empty file is `NoDatabase` (exit 0), an older schema is refused (78), and its
    cache writes never wait for the write lock. `check`: the directory and file-mode
    checks (done once per process; a second connection to the same file skips them).
    `migrate=False`: write mode without the schema steps (tests building an old schema);
    read mode without refusing an older schema (doctor, which reads only SQLite's own).
    """
    path = Path(path)
    memory = str(path) == ":memory:"
    if not memory:
        _prepare(path, mode, check)
    conn: apsw.Connection | None = None
    try:
        conn = _open(path, mode, busy_timeout_ms)
        conn.enable_load_extension(True)
        conn.load_extension(_vec_extension_path())
        conn.enable_load_extension(False)
        conn.set_busy_timeout(busy_timeout_ms)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Freed space is zeroed: an old text must not outlive its row in a free page (the FTS
        # index rewrites its pages in place on every edit; docs/privacy.md).
        conn.execute("PRAGMA secure_delete=ON")
        # Map the file: exact vector search reads every vector; mapping saves a copy per page.
        conn.execute("PRAGMA mmap_size=1073741824")
        kind = "empty" if memory else _kind(conn, path)
        if check and not memory and (kind == "hippo" or mode == "write"):
            tighten(path)  # only once it is ours: another application's file is left alone
        if mode == "read" and kind == "empty":
            raise NoDatabase(f"database {path} is empty: nothing stored yet (`hippo add` or "
                             "`hippo ingest` creates it)")
        if mode == "write":
            jm = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if jm and str(jm[0]).lower() not in ("wal", "memory"):
                conn.execute("PRAGMA journal_mode=WAL")
    except BaseException as exc:
        if conn is not None:
            conn.close()
        if mode == "read" and isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError)):
            why = _why_cannot_open(path)  # a read stores nothing: say why it cannot open
            if why:
                raise HippoError(f"cannot open database {path}{why}") from exc
        if isinstance(exc, apsw.Error):
            raise translate(exc, path) from exc
        raise
    db = Database(conn, path, busy_timeout_ms, mode)
    from hippo.migrations import migrate as run_migrations
    from hippo.migrations import pending

    try:
        if mode == "write":
            if migrate:
                run_migrations(db)
        elif migrate:
            waiting = pending(db)
            if waiting:
                raise ConfigError(
                    f"database {path} was written by an older hippo and needs {len(waiting)} "
                    f"schema step{'s' * (len(waiting) != 1)} ({waiting[-1]}); a read command "
                    "never changes it: run `hippo doctor --fix` (or any command that writes)")
    except BaseException:
        db.close()
        raise
    return db


def _open(path: Path, mode: Mode, busy_timeout_ms: int) -> apsw.Connection:
    """The connection, with its busy timeout set before its first statement (a read's probe
    below meets a writer that is creating the file or closing its WAL: it must wait, not
    fail). A read on a read-only file system, where SQLite cannot create the WAL index
    beside a cleanly closed file, reads it as immutable (nothing can change it)."""
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(busy_timeout_ms)
    if mode != "read" or str(path) == ":memory:":
        return conn
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (apsw.CantOpenError, apsw.ReadOnlyError) as exc:
        conn.close()
        if Path(f"{path}-wal").exists() or _filesystem_state(path) != "read-only":
            raise exc from None
        from urllib.parse import quote

        return apsw.Connection(f"file:{quote(str(path.resolve()))}?immutable=1",
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    return conn


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


def _kind(conn: apsw.Connection, path: Path) -> str:
    """"empty" (no tables yet), "hippo", or refused: another application's database."""
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    if not [n for n in names if n != "_migrations"]:
        return "empty"
    if "_migrations" in names and conn.execute(
            "SELECT 1 FROM _migrations WHERE name = '0001_core'").fetchone():
        return "hippo"
    shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
    raise ConfigError(f"{path} is not a hippo database (it holds other tables: {shown}); "
                      "hippo leaves it alone: choose another --db (or HIPPO_DB)")
