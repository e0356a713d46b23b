"""A real PostgreSQL + pgvector for tests and benches: each caller gets a schema of its own.

`HIPPO_TEST_PG_URL` names a server you bring (any PostgreSQL 15+ with pgvector); else
`pgserver` (a PyPI wheel bundling PostgreSQL 16 and pgvector) runs one from a data
directory in the temp dir (`HIPPO_TEST_PGDATA`), shared by the processes that use it and
stopped when the last one exits. Each test's store is a fresh schema, dropped afterwards:
`search_path` in the URL's `options` puts hippo's tables there.

`HIPPO_TEST_PG_TEAM=1`: each store is a team store instead (`hippo team init`: row-level
security, the tables owned by a role of the store's own), and the URL names a member's
role (pgserver trusts every login), so the suite runs under the policies.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

_server: object = None
_base: str | None = None


def base_url() -> str:
    """The server's URL (started on first use), with the vector extension in `public`."""
    global _server, _base
    if _base is not None:
        return _base
    url = os.environ.get("HIPPO_TEST_PG_URL")
    if not url:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
            import pgserver

        data = Path(os.environ.get("HIPPO_TEST_PGDATA")
                    or Path(tempfile.gettempdir()) / f"hippo-pgtest-{os.getuid()}")
        _server = pgserver.get_server(data, cleanup_mode="stop")
        url = _server.get_uri()  # type: ignore[attr-defined]
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    _base = url
    return url


def with_schema(url: str, schema: str) -> str:
    """`url` with hippo's tables in `schema` (and pgvector's types from `public`)."""
    option = quote(f"-csearch_path={schema},public", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={option}"


def team_mode() -> bool:
    return os.environ.get("HIPPO_TEST_PG_TEAM") == "1"


def as_role(url: str, role: str) -> str:
    """`url` logging in as `role` (no password: the test server trusts logins)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{role}@{rest.split('@', 1)[1]}"


def create_schema(prefix: str = "t") -> tuple[str, str]:
    """A new empty schema: (its name, the URL of a store in it)."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    if team_mode():
        from hippo.store.postgres.team import add_member, init

        init(base_url(), name)
        add_member(base_url(), name, f"{name}_m", password=False)
        return name, with_schema(as_role(base_url(), f"{name}_m"), name)
    with psycopg.connect(base_url(), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    return name, with_schema(base_url(), name)


def drop_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(base_url(), autocommit=True) as conn:
        # A connection a test left open holds locks only inside a transaction: end those
        # that hold one on this schema's tables (only those: other tests share the server).
        conn.execute("SELECT pg_terminate_backend(pid) FROM (SELECT DISTINCT l.pid FROM "
                     "pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relnamespace "
                     "= to_regnamespace(%s) AND l.pid <> pg_backend_pid()) AS holders",
                     (f'"{name}"',))
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        if team_mode():
            for role in (f"{name}_m", name, f"{name}_owner"):
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(f'DROP OWNED BY "{role}"')
                    conn.execute(f'DROP ROLE "{role}"')


@contextlib.contextmanager
def store_url(prefix: str = "t") -> Iterator[str]:
    """A fresh store's URL for the duration (its schema dropped afterwards)."""
    name, url = create_schema(prefix)
    try:
        yield url
    finally:
        drop_schema(name)
