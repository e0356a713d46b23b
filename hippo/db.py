"""Connect to the one SQLite file (apsw + sqlite-vec, WAL, busy timeout) and run transactions."""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw

from hippo.errors import BusyError, ConfigError, HippoError

Row = dict[str, Any]


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
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return HippoError(f"database {path} is corrupt or not a hippo database; run `hippo doctor`")
    if isinstance(exc, apsw.FullError):
        return HippoError(f"disk full while writing {path}; nothing from this command was stored")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return HippoError(f"database {path} is read-only; nothing from this command was stored")
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
        return HippoError(f"cannot open database {path}")
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


class Database:
    """One open connection with the helpers every store module uses."""

    def __init__(self, conn: apsw.Connection, path: Path, busy_timeout_ms: int = 5000) -> None:
        self.conn = conn
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
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
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def row(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        r = self.execute(sql, params).fetchone()
        return r[0] if r else None

    # -- transactions --------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Database]:
        """BEGIN IMMEDIATE (a writer takes the lock up front); savepoint when nested."""
        if self.conn.in_transaction:
            with self.conn:  # apsw: savepoint inside an open transaction
                yield self
            return
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
                                       create=False, migrate=False)
            except HippoError:
                return None
        return self._reader

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self.conn.close()


def connect(path: Path, *, busy_timeout_ms: int = 5000, create: bool = True,
            migrate: bool = True) -> Database:
    """Open (and if needed create) the database, load sqlite-vec, apply migrations."""
    path = Path(path)
    if str(path) != ":memory:":
        if not path.parent.exists():
            raise HippoError(
                f"directory {path.parent} does not exist; create it or choose another --db"
            )
        if not path.exists():
            if not create:
                raise HippoError(f"database {path} does not exist")
            # Created user-only: memories and transcripts are private.
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    try:
        conn = apsw.Connection(str(path))
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
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode and str(mode[0]).lower() not in ("wal", "memory"):
            conn.execute("PRAGMA journal_mode=WAL")
    except apsw.Error as exc:
        raise translate(exc, path) from exc
    db = Database(conn, path, busy_timeout_ms)
    if migrate:
        from hippo.migrations import migrate as run_migrations

        run_migrations(db)
    return db
