"""The SQL of a team store (`hippo team init`): row-level security on every table of the
store's schema, grants to the team role, and the two functions the team's roles call.

Three kinds of role (docs/postgres.md, "A team store"): the schema owner (`<team>_owner`,
NOLOGIN: owns every table, runs migrations; no member uses it), the team role (`<team>`,
NOLOGIN: holds the grants) and one LOGIN role per member, a member of the team role.
Every table has FORCE ROW LEVEL SECURITY, so even the owner goes through a policy (its own:
everything). What a member's role may do, by table:

- Echo (`echo_sessions`, `echo_chunks`, `echo_vec`) and ingest's `watermarks`: read their
  own rows (every session too once the team turned sharing on, meta `echo.shared`), write
  and delete only their own. `owner` is `current_user`: the policies check it, and the
  column's default is it.
- `meta`: keys under `user/<role>/` (a member's extraction watermark) are that role's
  alone; `echo.shared` only the owner may change.
- `audit`: read by all; a row is added only as oneself (`by_user = current_user`); an
  update may only erase its texts (a column grant and a trigger); no delete.
- `locks`: shared, but a holder is recorded as oneself.
- The Brain and everything else: read and written by every member, as the CLI allows
  today (the `hippo_team` policy: all rows).

Re-running it (another `hippo team init`) re-applies everything, so a table a later step
or a reindex created gets its policies too (`hippo_team_secure(table)`).
"""

from __future__ import annotations

from hippo.store.chunks import SHARED_KEY, SHARED_ON
from hippo.store.postgres.vectors import HNSW_MAX_DIM, VEC_INDEX, VEC_TABLE
from hippo.store.vectors import TABLES

MINE = "owner = current_user"
SHARED = f"EXISTS (SELECT 1 FROM meta WHERE key = '{SHARED_KEY}' AND value = '{SHARED_ON}')"
SEEN_SESSION = "EXISTS (SELECT 1 FROM echo_sessions e WHERE e.id = session_id)"
OWN_SESSION = ("EXISTS (SELECT 1 FROM echo_sessions e WHERE e.id = session_id "
               "AND e.owner = current_user)")
SEEN_CHUNK = "EXISTS (SELECT 1 FROM echo_chunks c WHERE c.id = chunk_id)"
OWN_CHUNK = ("EXISTS (SELECT 1 FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
             "WHERE c.id = chunk_id AND e.owner = current_user)")
# meta keys `user/<role>/...` are that role's (per-user values: extraction's watermark).
USER_KEY = "(split_part(key, '/', 1) <> 'user' OR split_part(key, '/', 2) = current_user)"
WRITABLE_KEY = f"(key <> '{SHARED_KEY}' AND {USER_KEY})"
AS_ONESELF = "by_user = current_user"

# table -> (command, USING, WITH CHECK) of the team role's policies.
Policy = tuple[str, str | None, str | None]
_CHUNK_LIKE: tuple[Policy, ...] = (
    ("SELECT", SEEN_CHUNK, None), ("INSERT", None, OWN_CHUNK),
    ("UPDATE", OWN_CHUNK, OWN_CHUNK), ("DELETE", OWN_CHUNK, None))
POLICIES: dict[str, tuple[Policy, ...]] = {
    "echo_sessions": (("SELECT", f"{MINE} OR {SHARED}", None), ("INSERT", None, MINE),
                      ("UPDATE", MINE, MINE), ("DELETE", MINE, None)),
    "echo_chunks": (("SELECT", SEEN_SESSION, None), ("INSERT", None, OWN_SESSION),
                    ("UPDATE", OWN_SESSION, OWN_SESSION), ("DELETE", OWN_SESSION, None)),
    "echo_vec": _CHUNK_LIKE,
    "echo_vec_next": _CHUNK_LIKE,
    "watermarks": (("ALL", MINE, MINE),),
    "meta": (("SELECT", USER_KEY, None), ("INSERT", None, WRITABLE_KEY),
             ("UPDATE", WRITABLE_KEY, WRITABLE_KEY), ("DELETE", WRITABLE_KEY, None)),
    "audit": (("SELECT", "true", None), ("INSERT", None, AS_ONESELF), ("UPDATE", "true", "true")),
    "locks": (("ALL", "true", AS_ONESELF),),
    "_migrations": (("SELECT", "true", None),),
}
SHARED_POLICY: tuple[Policy, ...] = (("ALL", "true", "true"),)
GRANTS = {"audit": "SELECT, INSERT, UPDATE (before, after)", "_migrations": "SELECT"}
ALL_ROWS = "SELECT, INSERT, UPDATE, DELETE"
# Who a row is recorded for: the role, whatever the connection says (HIPPO_USER is ignored).
DEFAULTS = (("audit", "by_user"), ("echo_sessions", "owner"), ("watermarks", "owner"),
            ("locks", "by_user"))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _policy_sql(table: str, team: str) -> list[str]:
    out = []
    for command, using, check in POLICIES.get(table, SHARED_POLICY):
        sql = f"CREATE POLICY hippo_{command.lower()} ON {table} FOR {command} TO {team}"
        if using is not None:
            sql += f" USING ({using})"
        if check is not None:
            sql += f" WITH CHECK ({check})"
        out.append(sql)
    return out


def _per_table(team: str) -> str:
    """plpgsql: the team role's policies and grants, by the table's name (`t`)."""
    branches: list[str] = []
    for table in POLICIES:
        body = [f"EXECUTE {_literal(s)};" for s in _policy_sql(table, team)]
        body.append(f"EXECUTE {_literal(f'GRANT {GRANTS.get(table, ALL_ROWS)} ON {table} TO {team}')};")
        branches.append(f"    {'IF' if not branches else 'ELSIF'} t = {_literal(table)} THEN\n      "
                        + "\n      ".join(body))
    shared = [f"EXECUTE format({_literal(s.replace(' ON x ', ' ON %I '))}, t);"
              for s in _policy_sql("x", team)]
    shared.append(f"EXECUTE format('GRANT {ALL_ROWS} ON %I TO {team}', t);")
    return "\n".join(branches) + "\n    ELSE\n      " + "\n      ".join(shared) + "\n    END IF;"


def secure_sql(owner: str, team: str) -> list[str]:
    """The statements (run as the schema owner, `search_path` the store's schema first)
    that create the team store's functions and secure every table there is. `owner` and
    `team` are role names (checked by the caller: lower case letters, digits, `_`)."""
    owner_name, owner, team = owner, f'"{owner}"', f'"{team}"'
    defaults = "\n  ".join(
        f"IF to_regclass({_literal(t)}) IS NOT NULL THEN EXECUTE "
        f"{_literal(f'ALTER TABLE {t} ALTER COLUMN {c} SET DEFAULT current_user')}; END IF;"
        for t, c in DEFAULTS)
    secure = f"""
CREATE OR REPLACE FUNCTION hippo_team_secure(only_table text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  t text;
  p text;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c
           WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
             AND (only_table IS NULL OR c.relname = only_table) ORDER BY c.relname LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    FOR p IN SELECT policyname FROM pg_policies
             WHERE schemaname = current_schema() AND tablename = t LOOP
      EXECUTE format('DROP POLICY %I ON %I', p, t);
    END LOOP;
    EXECUTE format('REVOKE ALL ON %I FROM PUBLIC, {team}', t);
    EXECUTE format('CREATE POLICY hippo_owner ON %I TO {owner} USING (true) WITH CHECK (true)', t);
{_per_table(team)}
  END LOOP;
  FOR t IN SELECT c.relname FROM pg_class c
           WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'S' LOOP
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %I TO {team}', t);
  END LOOP;
  {defaults}
END $fn$"""
    audit_guard = f"""
CREATE OR REPLACE FUNCTION hippo_audit_erase_only() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  IF ((NEW.before IS NOT NULL AND NEW.before IS DISTINCT FROM OLD.before)
      OR (NEW.after IS NOT NULL AND NEW.after IS DISTINCT FROM OLD.after))
     AND NOT pg_has_role({_literal(owner_name)}, 'MEMBER') THEN
    RAISE EXCEPTION 'audit rows are append-only: an update may only erase their texts'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END $fn$"""
    return [
        secure, audit_guard,
        "DROP TRIGGER IF EXISTS hippo_audit_erase_only ON audit",
        ("CREATE TRIGGER hippo_audit_erase_only BEFORE UPDATE ON audit FOR EACH ROW "
         "EXECUTE FUNCTION hippo_audit_erase_only()"),
        _vectors_sql(),
        "REVOKE ALL ON FUNCTION hippo_team_secure(text) FROM PUBLIC",
        "REVOKE ALL ON FUNCTION hippo_team_vectors(text, integer) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION hippo_team_vectors(text, integer) TO {team}",
        "SELECT hippo_team_secure()",
    ]


def _vectors_sql() -> str:
    """hippo_team_vectors(store, dimensions): a store's vector table, created on its first
    vectors by a member (who may not create tables), as the owner, then secured."""
    branches: list[str] = []
    for store, (table, key, parent) in TABLES.items():
        create = VEC_TABLE.format(table=table, key=key, parent=parent, dimensions="%s")
        index = VEC_INDEX.format(table=table)
        branches.append(
            f"{'IF' if not branches else 'ELSIF'} store = {_literal(store)} THEN\n"
            f"    EXECUTE format({_literal(create)}, dimensions);\n"
            f"    IF dimensions <= {HNSW_MAX_DIM} THEN EXECUTE {_literal(index)}; END IF;\n"
            f"    PERFORM hippo_team_secure({_literal(table)});")
    return f"""
CREATE OR REPLACE FUNCTION hippo_team_vectors(store text, dimensions integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
BEGIN
  IF dimensions IS NULL OR dimensions < 1 OR dimensions > 16000 THEN
    RAISE EXCEPTION 'not a vector dimension: %', dimensions;
  END IF;
  {chr(10).join(branches)}
  ELSE
    RAISE EXCEPTION 'no such store: %', store;
  END IF;
END $fn$"""
