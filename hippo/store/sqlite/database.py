"""Connect to the one SQLite file (apsw + sqlite-vec, WAL, busy timeout) and run transactions."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import apsw

from hippo.errors import HippoError
from hippo.store.base import Store
from hippo.store.sqlite.dialect import SQLITE
from hippo.store.sqlite.errors import skippable, translate
from hippo.store.sqlite.files import _prepare, _why_cannot_open
from hippo.store.sqlite.opening import _configure, _open, _schema

if TYPE_CHECKING:
    from hippo.store.base import Mode, Row
    from hippo.store.vectors import Vectors

HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE name = ?"
# A read command's cache write waits this long for the write lock, then is skipped.
CACHE_WAIT_MS = 0
# A hook's own deadline for a read: in WAL mode only a crash recovery or a WAL reset by
# another process can make a reader wait, never a writer; an agent waits for no more.
HOOK_WAIT_MS = 1000


class Sql:
    """The query helpers over one connection: what the repositories use. A repository holds
    this, not the `Database`, so a store nobody holds any more is closed at once (no
    reference cycle keeps its connection open until a garbage collection)."""

    dialect = SQLITE
    team = False


    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def has_table(self, name: str) -> bool:
        return bool(self.scalar(HAS_TABLE, (name,)))


    def changes(self) -> int:
        """Rows the last statement changed."""
        return int(self.conn.changes())

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> apsw.Cursor:
        try:
            return self.conn.execute(sql, params)
        except apsw.Error as exc:
            if isinstance(exc, (apsw.SQLError, apsw.ConstraintError, apsw.MismatchError)):
                raise
            raise translate(exc, self.path) from exc

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        return list(self.stream(sql, params))

    def stream(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Iterator[Row]:
        """The rows one at a time, as the statement steps (a large table is never held)."""
        cur = self.execute(sql, params)
        try:
            names = [d[0] for d in cur.getdescription()]
        except apsw.ExecutionCompleteError:  # the statement returned no rows at all
            return
        try:  # a damaged page may show only once the rows are stepped through
            yield from (dict(zip(names, r)) for r in cur)
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


class Database(Sql, Store):  # type: ignore[misc]  # its `path` is never None
    """The SQLite store: one open connection, the query helpers its repositories use, and
    the parts SQLite does its own way (sqlite-vec, FTS5)."""

    PARTS: ClassVar[dict[str, str]] = {
        "vectors": "hippo.store.sqlite.vectors:SqliteVectors",
        "lexical": "hippo.store.sqlite.lexical:SqliteLexical",
        "jobs": "hippo.store.jobs:Jobs",
        "reindex": "hippo.store.sqlite.reindex:SqliteReindex",
        "health": "hippo.store.sqlite.health:SqliteHealth",
    }
    _skippable = staticmethod(skippable)

    def __init__(self, conn: apsw.Connection, path: Path, busy_timeout_ms: int = 5000,
                 mode: Mode = "write", index: Any = None) -> None:
        super().__init__(conn, path)
        # A warm process's in-memory index of this file's Brain vectors (`connect`'s).
        self._index = index
        self.label = str(path)
        self.busy_timeout_ms = busy_timeout_ms
        # "read": opened by a read command; its writes are cache writes that never wait.
        self.mode: Mode = mode
        self._reader: Database | None = None

    def _sql(self) -> Sql:
        return Sql(self.conn, self.path)

    @functools.cached_property
    def vectors(self) -> Vectors:
        """sqlite-vec's index; with a warm index, one whose Brain KNN answers from memory
        (`hippo.warm.index.WarmVectors`), built with the store."""
        own: Vectors = self._part("vectors")
        return own if self._index is None else self._index.vectors(own)

    @contextlib.contextmanager
    def waiting(self, ms: int) -> Iterator[None]:
        """Inside: wait at most `ms` for a lock, then this connection's own timeout again."""
        self.conn.set_busy_timeout(ms)
        try:
            yield
        finally:
            self.conn.set_busy_timeout(self.busy_timeout_ms)

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
            check: bool = True, migrate: bool = True, index: Any = None) -> Database:
    """Open the database, load sqlite-vec; refuse a file that is not hippo's.

    mode "write" creates the file (user-only), switches it to WAL and applies migrations.
    mode "read" (search, list, show, ...) never creates, migrates or converts anything: a
    missing or empty file is `NoDatabase` (exit 0), an older schema is refused (78), and its
    cache writes never wait for the write lock. `check`: the directory and file-mode
    checks (done once per process; a second connection to the same file skips them).
    `migrate=False`: write mode without the schema steps (tests building an old schema);
    read mode without refusing an older schema (doctor, which reads only SQLite's own).
    `index`: a warm process's in-memory index of the file's Brain vectors (`vectors`).
    """
    path = Path(path)
    memory = str(path) == ":memory:"
    if not memory:
        _prepare(path, mode, check)
    conn: apsw.Connection | None = None
    try:
        conn = _open(path, mode, busy_timeout_ms)
        _configure(conn, path, mode, busy_timeout_ms, check=check, memory=memory)
    except BaseException as exc:
        if conn is not None:
            conn.close()
        error = _open_error(exc, path, mode)
        if error is None:
            raise
        raise error from exc
    db = Database(conn, path, busy_timeout_ms, mode, index)
    try:
        _schema(db, migrate)
    except BaseException:
        db.close()
        raise
    return db


def _open_error(exc: BaseException, path: Path, mode: Mode) -> HippoError | None:
    """The hippo error opening raises for an apsw error `exc`; None: `exc` itself goes up."""
    if mode == "read" and isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError)):
        why = _why_cannot_open(path)  # a read stores nothing: say why it cannot open
        if why:
            return HippoError(f"cannot open database {path}{why}")
    if isinstance(exc, apsw.Error):
        return translate(exc, path)
    return None
