"""Connect to a PostgreSQL server (psycopg 3, pgvector) and run transactions.

One `PgDatabase` is one connection in autocommit mode: a statement outside `transaction()`
is its own transaction. A write transaction first takes the schema's writer lock (a
transaction-scoped advisory lock), which is SQLite's write lock here: writers take turns
and readers never wait. A read command's cache write only tries it, and is skipped when
another writer holds it. The connection has a connect deadline (`connect_timeout`), so a
server that is down costs a command seconds, not minutes.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from hippo.config import display
from hippo.errors import HippoError
from hippo.store.base import Store
from hippo.store.postgres.dialect import POSTGRES
from hippo.store.postgres.errors import connect_error, skippable, translate

if TYPE_CHECKING:
    from pathlib import Path

    from hippo.store.base import Mode, Row

# hippo's advisory locks: (class, hashtext(current_schema())): one hippo per schema.
WRITER_CLASS = 0x4869_7002
WRITE_LOCK = "SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))"
TRY_WRITE_LOCK = "SELECT pg_try_advisory_xact_lock(?, hashtext(current_schema()))"
SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, false)"
HAS_TABLE = "SELECT to_regclass(?) IS NOT NULL"
# A prepared statement whose table's row type changed since (PostgreSQL's message), and
# the statement that forgets this connection's prepared statements.
STALE_PLAN = "cached plan must not change result type"
FORGET_PLANS = "DEALLOCATE ALL"
# The tables a purge erases text (or its vectors) from: `checkpoint` rewrites them.
TEXT_TABLES = ("memories", "audit", "memory_sources", "embed_cache", "memories_vec",
               "memories_vec_next", "echo_sessions", "echo_chunks", "echo_vec", "echo_vec_next")
VACUUM_FULL = {name: f"VACUUM (FULL) {name}" for name in TEXT_TABLES}
PURGED_TABLES = ("SELECT t AS name, pg_has_role(c.relowner, 'USAGE') AS owned "
                 "FROM unnest(?::text[]) WITH ORDINALITY AS u(t, n) "
                 "JOIN pg_class c ON c.oid = to_regclass(u.t) ORDER BY u.n")
# The deadline for reaching the server; libpq counts whole seconds, at least 2.
CONNECT_TIMEOUT_S = 3


# Outside a quoted literal: a `?` or `:name` parameter, or a `%`; inside one, only `%`.
_PARTS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|(?<![:\w]):([A-Za-z_]\w*)|\?|%")


@functools.lru_cache(maxsize=1024)
def native(sql: str) -> str:
    """The store's SQL (SQLite's parameters, `?` and `:name`) in psycopg's: `%s` and
    `%(name)s`, every other `%` doubled (psycopg reads them inside literals too)."""
    def part(m: re.Match[str]) -> str:
        text = m.group(0)
        if text == "?":
            return "%s"
        if m.group(1):
            return f"%({m.group(1)})s"
        return text.replace("%", "%%")

    return _PARTS.sub(part, sql)


class PgSql:
    """The query helpers over one connection: what the repositories use. Queries come with
    SQLite's parameters (`?`, `:name`), read in psycopg's (`native`).
    `team`: the store is a team store (row-level security; `hippo.store.postgres.team`)."""

    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection[Any], label: str, team: bool = False) -> None:
        self.conn = conn
        self.label = label
        self.rowcount = 0
        self.team = team

    def has_table(self, name: str) -> bool:
        return bool(self.scalar(HAS_TABLE, (name,)))

    def changes(self) -> int:
        """Rows the last statement through these helpers changed."""
        return self.rowcount

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None,
                ) -> psycopg.Cursor[Any]:
        return self._run(self.conn.cursor(), sql, params)

    def _run(self, cur: psycopg.Cursor[Any], sql: str,
             params: Sequence[Any] | dict[str, Any] | None) -> psycopg.Cursor[Any]:
        try:
            cur.execute(native(sql) if params else sql, params or None)
        except (psycopg.errors.SyntaxError, psycopg.errors.UndefinedColumn,
                psycopg.errors.UndefinedTable, psycopg.errors.IntegrityError):
            raise  # hippo's own mistakes and constraint violations: callers decide
        except psycopg.Error as exc:
            if self._replanned(exc):
                return self._run(cur, sql, params)
            raise translate(exc, self.label) from exc
        self.rowcount = max(cur.rowcount, 0)
        return cur

    def _replanned(self, exc: psycopg.Error) -> bool:
        """After another connection changed a table's row type (a reindex to another
        dimension), this connection's prepared statements of it fail for good: outside a
        transaction, forget them (DEALLOCATE ALL, which psycopg sees) and say to retry.
        In a transaction its rollback forgets them."""
        if not (isinstance(exc, psycopg.errors.FeatureNotSupported) and STALE_PLAN in str(exc)
                and not self.in_transaction()):
            return False
        self.conn.execute(FORGET_PLANS)
        return True

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[Row]:
        cur = self._run(self.conn.cursor(row_factory=dict_row), sql, params)
        try:
            return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise translate(exc, self.label) from exc

    def stream(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None,
               ) -> Iterator[Row]:
        """The rows one at a time, as the server sends them (single-row mode: a large
        table is never held); the connection serves nothing else until they are read."""
        try:
            yield from self.conn.cursor(row_factory=dict_row).stream(
                native(sql) if params else sql, params or None)
        except psycopg.Error as exc:
            raise translate(exc, self.label) from exc

    def row(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Any:
        cur = self.execute(sql, params)
        r = cur.fetchone() if cur.description else None
        return r[0] if r else None

    def in_transaction(self) -> bool:
        return self.conn.info.transaction_status != TransactionStatus.IDLE


class PgDatabase(PgSql, Store):
    """The PostgreSQL store: one connection, the query helpers its repositories use, and
    the parts PostgreSQL does its own way (pgvector, tsvector, advisory locks)."""

    PARTS: ClassVar[dict[str, str]] = {
        "vectors": "hippo.store.postgres.vectors:PgVectors",
        "lexical": "hippo.store.postgres.lexical:PgLexical",
        "jobs": "hippo.store.postgres.jobs:PgJobs",
        "reindex": "hippo.store.postgres.reindex:PgReindex",
        "health": "hippo.store.postgres.health:PgHealth",
    }
    _skippable = staticmethod(skippable)

    path: Path | None = None
    team = False

    def __init__(self, conn: psycopg.Connection[Any], url: str, busy_timeout_ms: int = 5000,
                 mode: Mode = "write") -> None:
        super().__init__(conn, display(url))
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        self.mode: Mode = mode

    def _sql(self) -> PgSql:
        return PgSql(self.conn, self.label, self.team)

    # -- transactions --------------------------------------------------------------
    @contextlib.contextmanager
    def waiting(self, ms: int) -> Iterator[None]:
        """Inside: wait at most `ms` for a lock, then this connection's own timeout again."""
        self.execute(SET_LOCK_TIMEOUT, (f"{max(int(ms), 1)}ms",))
        try:
            yield
        finally:
            with contextlib.suppress(HippoError, psycopg.Error):
                self.execute(SET_LOCK_TIMEOUT, (f"{self.busy_timeout_ms}ms",))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[PgDatabase]:
        """All or nothing, writers in turn (the writer lock); a savepoint when nested."""
        if self.in_transaction():
            with self.conn.transaction():
                yield self
            return
        try:
            with self.conn.transaction():
                if self.mode == "read":  # a cache write: skipped rather than waited for
                    if not self.scalar(TRY_WRITE_LOCK, (WRITER_CLASS,)):
                        raise translate(psycopg.errors.LockNotAvailable(
                            "another hippo holds the writer lock"), self.label)
                else:
                    self.execute(WRITE_LOCK, (WRITER_CLASS,))
                yield self
        except psycopg.Error as exc:  # raised by COMMIT itself
            raise translate(exc, self.label) from exc


    def checkpoint(self) -> bool:
        """After a purge: rewrite the tables that held text (VACUUM FULL), so no erased
        row's old version stays in their pages (a plain VACUUM only marks the space free,
        and the bytes stay until overwritten). False when it could not: another connection
        holds a lock on one past the lock timeout, or this role does not own them."""
        if self.in_transaction():
            return False  # VACUUM cannot run inside a transaction
        tables = self.rows(PURGED_TABLES, (list(TEXT_TABLES),))
        if not all(r["owned"] for r in tables):
            return False  # VACUUM would skip them with a mere warning
        try:
            for r in tables:
                self.execute(VACUUM_FULL[r["name"]])
        except HippoError:
            return False
        return True

    def reader(self) -> PgDatabase | None:
        """None: the server answers one statement of a connection at a time, and a
        second connection costs more than the parallel read saves."""
        return None

    def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.conn.close()


def _timeout_s(busy_timeout_ms: int) -> int:
    env = os.environ.get("PGCONNECT_TIMEOUT")
    if env and env.strip().isdigit():
        return max(2, int(env))
    return max(2, min(CONNECT_TIMEOUT_S, math.ceil(busy_timeout_ms / 1000)))


def connect(url: str, *, busy_timeout_ms: int = 5000, mode: Mode = "write",
            check: bool = True, migrate: bool = True) -> PgDatabase:
    """Connect to the server at `url`; to write, create and migrate hippo's schema.

    mode "read" never creates or migrates anything: a database without hippo's tables is
    `NoDatabase` (exit 0), an older schema is refused (78). Credentials come from the URL,
    PGPASSWORD / PGSERVICE or ~/.pgpass, as libpq reads them; no message shows them.
    """
    label = display(url)
    scheme, rest = url.split("://", 1)
    url = f"{scheme.lower()}://{rest}"  # libpq knows the scheme in lower case only
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=_timeout_s(busy_timeout_ms),
                               application_name="hippo")
    except psycopg.Error as exc:
        raise connect_error(exc, label, url) from None
    db = PgDatabase(conn, url, busy_timeout_ms, mode)
    try:
        from hippo.store.postgres.opening import setup

        setup(db, migrate)
    except BaseException:
        db.close()
        raise
    return db
