"""Named, append-only schema steps for PostgreSQL, recorded in `_migrations`, applied on open.

Never edit or reorder a step that has shipped: append a new one (its SQL text goes in
`hippo.store.postgres.schema`). Two processes opening a new database at once do not both
migrate it: the steps run under a session advisory lock of the schema's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.store import migrations as steps
from hippo.store.postgres.schema import P0001_CORE, P0002_VALIDITY

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("p0001_core", P0001_CORE),
    ("p0002_validity", P0002_VALIDITY),
)
# One lock class for hippo's advisory locks; the second key is the schema's (see `key`).
MIGRATE_LOCK = "SELECT pg_advisory_lock(?, hashtext(current_schema()))"
MIGRATE_UNLOCK = "SELECT pg_advisory_unlock(?, hashtext(current_schema()))"
MIGRATE_CLASS = 0x4869_7001


def pending(db: PgSql) -> list[str]:
    """The steps this database lacks, without changing it; a newer schema is refused."""
    return steps.pending(db, [name for name, _ in MIGRATIONS], db.label)


def migrate(db: PgSql) -> list[str]:
    """Apply every missing step, each in its own transaction; refuse a newer schema."""
    if not pending(db):
        return []
    ran: list[str] = []
    db.execute(MIGRATE_LOCK, (MIGRATE_CLASS,))
    try:
        db.execute(steps.LEDGER)
        for name in pending(db):  # again, under the lock: another process may have migrated
            with db.conn.transaction():
                db.execute(dict(MIGRATIONS)[name])
                steps.record(db, name)
            ran.append(name)
    finally:
        db.execute(MIGRATE_UNLOCK, (MIGRATE_CLASS,))
    return ran
