"""Named, append-only schema steps for PostgreSQL, recorded in `_migrations`, applied on open.

Never edit or reorder a step that has shipped: append a new one (its SQL text goes in
`hippo.store.postgres.schema`). Two processes opening a new database at once do not both
migrate it: the steps run under a session advisory lock of the schema's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.errors import ConfigError
from hippo.store.postgres.schema import P0001_CORE, P0002_VALIDITY

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("p0001_core", P0001_CORE),
    ("p0002_validity", P0002_VALIDITY),
)
LEDGER = ("CREATE TABLE IF NOT EXISTS _migrations ("
          "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
APPLIED = "SELECT name FROM _migrations ORDER BY applied_at, name"
RECORD = ("INSERT INTO _migrations(name, applied_at) "
          "VALUES (?, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))")
HAS_LEDGER = "SELECT to_regclass('_migrations') IS NOT NULL"
# One lock class for hippo's advisory locks; the second key is the schema's (see `key`).
MIGRATE_LOCK = "SELECT pg_advisory_lock(?, hashtext(current_schema()))"
MIGRATE_UNLOCK = "SELECT pg_advisory_unlock(?, hashtext(current_schema()))"
MIGRATE_CLASS = 0x4869_7001


def applied(db: PgSql) -> list[str]:
    if not db.scalar(HAS_LEDGER):
        return []
    return [r["name"] for r in db.rows(APPLIED)]


def _newer(db: PgSql, done: list[str]) -> None:
    known = [name for name, _ in MIGRATIONS]
    newer = [name for name in done if name not in known]
    if newer:
        raise ConfigError(
            f"database {db.label} has schema step {newer[-1]!r}, newer than this hippo; "
            "upgrade hippo (pip install -U hippo) to use it")


def pending(db: PgSql) -> list[str]:
    """The steps this database lacks, without changing it; a newer schema is refused."""
    done = applied(db)
    _newer(db, done)
    return [name for name, _ in MIGRATIONS if name not in done]


def migrate(db: PgSql) -> list[str]:
    """Apply every missing step, each in its own transaction; refuse a newer schema."""
    if not pending(db):
        return []
    ran: list[str] = []
    db.execute(MIGRATE_LOCK, (MIGRATE_CLASS,))
    try:
        db.execute(LEDGER)
        done = applied(db)  # again, under the lock: another process may have migrated
        _newer(db, done)
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            with db.conn.transaction():
                db.execute(sql)
                db.execute(RECORD, (name,))
            ran.append(name)
    finally:
        db.execute(MIGRATE_UNLOCK, (MIGRATE_CLASS,))
    return ran
