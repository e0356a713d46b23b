"""`hippo team init` and `hippo team add-member`: a team store whose privacy PostgreSQL
enforces (row-level security, `hippo.store.postgres.team_sql`), set up by an administrator.

`init` creates the roles (`<team>_owner`, NOLOGIN, owns the schema and every table; `<team>`,
NOLOGIN, holds the grants), the schema `<team>` (or `--schema`), hippo's tables in it (as
the owner), and the policies; run again, it applies schema steps a newer hippo added and
re-applies the policies. `add_member` creates a LOGIN role in the team role, with a
password it makes up (sent to the server as a SCRAM verifier, never as text), and says what
the member needs: the URL, the password, a ~/.pgpass line.
"""

from __future__ import annotations

import re
import secrets
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql

from hippo.config import display
from hippo.errors import ConfigError, UsageError
from hippo.store.postgres.errors import connect_error, translate
from hippo.store.postgres.team_sql import secure_sql

NAME = re.compile(r"[a-z_][a-z0-9_]{0,56}")
PRIVILEGES = ("SELECT r.rolsuper, r.rolcreaterole, has_database_privilege(current_database(), "
              "'CREATE') AS may_create, current_user AS me, "
              "current_setting('server_version_num')::int AS version "
              "FROM pg_roles r WHERE r.rolname = current_user")
ROLE = "SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = %s"
SCHEMA_OWNER = ("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s")
SCHEMAS_OF = ("SELECT nspname FROM pg_namespace WHERE nspowner = to_regrole(%s) "
              "ORDER BY nspname")
HAS_VECTOR = "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
AVAILABLE = "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
LEGACY = ("SELECT NOT c.relforcerowsecurity FROM pg_class c WHERE c.oid = to_regclass(%s)")


def _name(value: str, what: str) -> str:
    if not NAME.fullmatch(value):
        raise UsageError(f"not a {what} name: {value!r} (lower case letters, digits and _, "
                         "starting with a letter or _, at most 57)")
    return value


class Admin:
    """An administrator's connection (autocommit) to the server `url` names."""

    def __init__(self, url: str, timeout_s: int = 10) -> None:
        self.label = display(url)
        scheme, rest = url.split("://", 1)
        try:
            self.conn = psycopg.connect(f"{scheme.lower()}://{rest}", autocommit=True,
                                        connect_timeout=timeout_s, application_name="hippo")
        except psycopg.Error as exc:
            raise connect_error(exc, self.label, url) from None

    def one(self, query: str | sql.Composed, params: tuple[Any, ...] = ()) -> Any:
        return self.run(query, params).fetchone()

    def run(self, query: str | sql.Composed, params: tuple[Any, ...] = ()) -> Any:
        try:
            return self.conn.execute(query, params or None)
        except psycopg.Error as exc:
            raise translate(exc, self.label) from exc

    def may_set_up(self, what: str) -> dict[str, Any]:
        """The connecting role's powers; refused unless it may create roles and schemas."""
        row = self.one(PRIVILEGES)
        keys = ("super", "createrole", "may_create", "me", "version")
        got = dict(zip(keys, row))
        if not (got["super"] or (got["createrole"] and (got["may_create"]
                                                        or what == "add-member"))):
            raise ConfigError(
                f"role {got['me']} at {self.label} may not set up a team store (`hippo team "
                f"{what}` needs a superuser, or a role with CREATEROLE and CREATE on the "
                "database); connect as the database's administrator")
        return got

    def close(self) -> None:
        self.conn.close()


def _ensure_role(admin: Admin, name: str, powers: dict[str, Any]) -> None:
    row = admin.one(ROLE, (name,))
    if row is None:
        admin.run(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(name)))
    elif row[0] or row[1]:
        raise ConfigError(f"role {name} exists at {admin.label} and can log in: a team's "
                          "roles are NOLOGIN; choose another --team")
    if not powers["super"]:  # the administrator acts as the owner to create its objects
        admin.run(sql.SQL("GRANT {} TO {}").format(sql.Identifier(name),
                                                   sql.Identifier(powers["me"])))


def init(url: str, team: str, schema: str | None = None) -> dict[str, Any]:
    """Set up (or bring up to date) the team store `team` at `url`; what was made."""
    from hippo.store.postgres.database import PgSql
    from hippo.store.postgres.migrations import migrate

    team = _name(team, "team")
    owner = f"{team}_owner"
    schema = _name(schema or team, "schema")
    admin = Admin(url)
    try:
        powers = admin.may_set_up("init")
        if not admin.one(HAS_VECTOR):
            if not admin.one(AVAILABLE):
                raise ConfigError(f"PostgreSQL at {admin.label} has no pgvector extension "
                                  "(`vector`); install pgvector 0.5 or newer on the server")
            admin.run("CREATE EXTENSION IF NOT EXISTS vector")
        with admin.conn.transaction():
            _ensure_role(admin, owner, powers)
            _ensure_role(admin, team, powers)
            _ensure_schema(admin, schema, owner, team)
        ident = sql.Identifier
        admin.run(sql.SQL("SET ROLE {}").format(ident(owner)))
        admin.run(sql.SQL("SET search_path TO {}, public").format(ident(schema)))
        steps = migrate(PgSql(admin.conn, admin.label))
        with admin.conn.transaction():
            for statement in secure_sql(owner, team):
                admin.run(statement)
        admin.run("RESET ROLE")
        admin.run("RESET search_path")
        return {"team": team, "schema": schema, "owner": owner, "team_role": team,
                "schema_steps": steps, "url": member_url(admin, "MEMBER", schema),
                "next": f"hippo team add-member NAME --team {team}"}
    finally:
        admin.close()


def _ensure_schema(admin: Admin, schema: str, owner: str, team: str) -> None:
    found = admin.one(SCHEMA_OWNER, (schema,))
    ident = sql.Identifier
    if found is None:
        admin.run(sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(ident(schema), ident(owner)))
    elif found[0] != owner:
        legacy = admin.one(LEGACY, (f'"{schema}".meta',))
        what = "holds a hippo store set up without `hippo team init`" if legacy else \
            f"exists, owned by {found[0]}"
        raise ConfigError(f"schema {schema} at {admin.label} {what}; choose another --schema "
                          "(docs/postgres.md: moving a shared store to a team store)")
    admin.run(sql.SQL("REVOKE CREATE ON SCHEMA {} FROM PUBLIC").format(ident(schema)))
    admin.run(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(ident(schema), ident(team)))


def member_url(admin: Admin, name: str, schema: str) -> str:
    """The URL a member's hippo uses: their role, the server, the store's schema."""
    info = admin.conn.info
    option = quote(f"-csearch_path={schema},public", safe="")
    host = info.host
    where = (f"@/{quote(info.dbname)}?host={quote(host)}&port={info.port}&"
             if host.startswith("/") else f"@{host}:{info.port}/{quote(info.dbname)}?")
    return f"postgresql://{name}{where}options={option}"


def add_member(url: str, team: str, name: str, *, password: bool = True) -> dict[str, Any]:
    """Make `name` a LOGIN role in `team` (created, or granted the team role when it
    exists); what the member needs to connect."""
    team = _name(team, "team")
    name = _name(name, "member")
    if name in (team, f"{team}_owner"):
        raise UsageError(f"{name} is one of the team's own roles; name a person or host")
    admin = Admin(url)
    try:
        admin.may_set_up("add-member")
        schemas = [r[0] for r in admin.run(SCHEMAS_OF, (f"{team}_owner",)).fetchall()]
        if admin.one(ROLE, (team,)) is None or not schemas:
            raise ConfigError(f"no team {team} at {admin.label}: run `hippo team init "
                              f"--team {team}` first")
        secret = secrets.token_urlsafe(18) if password else None
        found = admin.one(ROLE, (name,))
        ident = sql.Identifier
        if found is not None and found[1]:
            raise ConfigError(f"role {name} at {admin.label} is a superuser: it would see "
                              "everything; name a role of its own")
        with admin.conn.transaction():
            if found is None:
                admin.run(sql.SQL("CREATE ROLE {} LOGIN").format(ident(name)))
            if secret is not None:
                verifier = admin.conn.pgconn.encrypt_password(
                    secret.encode(), name.encode(), b"scram-sha-256").decode()
                admin.run(sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(
                    ident(name), sql.Literal(verifier)))
            admin.run(sql.SQL("GRANT {} TO {}").format(ident(team), ident(name)))
        info = admin.conn.info
        host = info.host.replace(":", "\\:")  # a .pgpass field escapes its colons
        return {"member": name, "team": team, "schema": schemas[0],
                "url": member_url(admin, name, schemas[0]), "password": secret,
                "pgpass": (f"{host}:{info.port}:{info.dbname}:{name}:{secret}"
                           if secret else None),
                "note": "HIPPO_USER is ignored on a team store: the role is who you are"}
    finally:
        admin.close()
