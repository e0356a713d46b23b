"""Opening a PostgreSQL store: the server's version, hippo's schema (created and migrated
to write, checked to read), pgvector's type, and who the connection records as the user.

On a team store (`hippo team init`) the database role is the user and HIPPO_USER is
ignored; a role without the team's grants, or a schema step only the owner may apply, is
refused with one line naming `hippo team` (exit 78).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hippo.errors import ConfigError, NoDatabase

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgDatabase, PgSql

# A team store (`hippo team init`: FORCE ROW LEVEL SECURITY on its tables) records the
# role (`current_user`, what its policies check) as who did what and ignores HIPPO_USER;
# `granted`: whether this role may use it.
TEAM = ("coalesce((SELECT c.relforcerowsecurity FROM pg_class c "
        "WHERE c.oid = to_regclass('meta')), false)")
SETUP = (f"SELECT set_config('hippo.user', CASE WHEN {TEAM} THEN current_user::text "
         "ELSE ? END, false), "
         "set_config('lock_timeout', ?, false), "
         "to_regtype('vector')::oid AS vector_oid, to_regclass('meta') IS NOT NULL AS ours, "
         f"{TEAM} AS team, current_user AS role, "
         "coalesce(has_table_privilege(to_regclass('meta'), 'SELECT'), false) AS granted, "
         "current_setting('server_version_num')::int AS version")
# A team store in the search path that this role may not use (no USAGE on its schema:
# to_regclass does not see it), by the schemas `search_path` names.
LOCKED_OUT = ("SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
              "WHERE c.relname = 'meta' AND c.relforcerowsecurity AND n.nspname = ANY(?) "
              "AND NOT has_schema_privilege(n.oid, 'USAGE') LIMIT 1")
HAS_VECTOR = "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
VECTOR_OID = "SELECT to_regtype('vector')::oid"
MIN_SERVER = 150000  # PostgreSQL 15


def _user() -> str:
    return os.environ.get("HIPPO_USER", "").strip()


def _locked_out(db: PgSql) -> bool:
    """Whether `search_path` names a team store's schema this role may not use."""
    path = str(db.scalar("SELECT current_setting('search_path')") or "")
    names = [p.strip().strip('"') for p in path.split(",") if p.strip()]
    return bool(names) and db.scalar(LOCKED_OUT, (names,)) is not None


def _migrate(db: PgDatabase, role: str) -> None:
    """Create or migrate hippo's tables; a role that may not is told who sets a store up."""
    import psycopg

    from hippo.errors import HippoError
    from hippo.store.postgres import migrations

    try:
        migrations.migrate(db)
    except HippoError as exc:
        if not isinstance(exc.__cause__, psycopg.errors.InsufficientPrivilege):
            raise
        schema = db.scalar("SELECT current_schema()")
        raise ConfigError(
            f"role {role} may not create hippo's tables in schema {schema} at {db.label}; "
            "a team store's URL names its schema (`hippo team add-member` prints it), and "
            "an administrator sets one up with `hippo team init`") from None


def setup(db: PgDatabase, migrate: bool) -> None:
    from hippo.store.migrations import refuse_older
    from hippo.store.postgres import migrations
    from hippo.store.postgres.vector import register

    row = db.row(SETUP, (_user(), f"{db.busy_timeout_ms}ms"))
    assert row is not None
    if row["version"] < MIN_SERVER:
        raise ConfigError(f"PostgreSQL at {db.label} is version {row['version'] // 10000}; "
                          "hippo needs 15 or newer")
    db.team = bool(row["team"])
    if db.team and not row["granted"] or not row["ours"] and _locked_out(db):
        raise ConfigError(f"role {row['role']} has no grants on the team store at {db.label}; "
                          f"an administrator adds it with `hippo team add-member {row['role']}`")
    if db.team and migrate and migrations.pending(db):
        raise ConfigError(f"the team store at {db.label} needs a schema step of this hippo; "
                          "an administrator applies it with `hippo team init` (members may "
                          "not change the schema)")
    if db.mode == "read":
        if not row["ours"]:
            raise NoDatabase(f"database {db.label} has no hippo store yet: nothing stored "
                             "(`hippo add` or `hippo ingest` creates it)")
        if migrate:
            refuse_older(db.label, migrations.pending(db), "any command that writes")
    elif migrate:
        if row["vector_oid"] is None and not db.scalar(HAS_VECTOR):
            raise ConfigError(f"PostgreSQL at {db.label} has no pgvector extension (`vector`); "
                              "install pgvector 0.5 or newer on the server")
        _migrate(db, row["role"])
    oid = row["vector_oid"] or db.scalar(VECTOR_OID)
    if oid:
        register(db.conn, int(oid))
