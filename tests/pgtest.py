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
        _server = _start(pgserver, data)
        url = _server.get_uri()  # type: ignore[attr-defined]
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    _base = url
    return url


def _start(pgserver: object, data: Path, wait: float = 180.0) -> object:
    """pgserver's server on `data`. A data directory a killed run left behind starts with
    crash recovery, which may outlast pg_ctl's 10 s wait: then wait for the server itself to
    say it is ready (its `postmaster.pid`) and ask again."""
    import subprocess
    import time

    from pgserver.utils import PostmasterInfo

    try:
        return pgserver.get_server(data, cleanup_mode="stop")  # type: ignore[attr-defined]
    except subprocess.TimeoutExpired:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            info = PostmasterInfo.read_from_pgdata(data.resolve())
            if info is not None and info.is_running() and info.status == "ready":
                break
            time.sleep(1.0)
        pgserver.PostgresServer._instances.pop(data.resolve(), None)  # type: ignore[attr-defined]
        return pgserver.get_server(data, cleanup_mode="stop")  # type: ignore[attr-defined]


def with_schema(url: str, schema: str) -> str:
    """`url` with hippo's tables in `schema` (and pgvector's types from `public`)."""
    option = quote(f"-csearch_path={schema},public", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={option}"


def team_mode() -> bool:
    return os.environ.get("HIPPO_TEST_PG_TEAM") == "1"


# What the team-store run skips (node id prefixes), and why: none is a command a member
# runs; each test itself does what only the owner (or the server's superuser) may, or
# tells users apart by HIPPO_USER, which a team store ignores (tests/postgres/test_team.py
# tells them apart by role).
_LABELS = "tells users apart by HIPPO_USER, which a team store ignores (test_team.py: roles)"
_OWNER = "the test (or the command) changes tables, indexes or the server: the owner's job"
_PURGE = "checks the file after a purge: a member's purge cannot VACUUM FULL (the owner's)"
_SCHEMA = "changes the schema itself (steps, older or newer): `hippo team init`'s job"
_EMPTY = "needs a database without hippo's tables: `hippo team init` made them"
TEAM_SKIPS: dict[str, str] = {
    "tests/echo/test_echo_owners.py": _LABELS,
    "tests/postgres/test_two_users.py": _LABELS,
    "tests/postgres/test_cli.py::test_the_audit_log_records_which_user_changed_what": _LABELS,
    "tests/retrieve/test_search_store.py::test_echo_bm25_is_fts5s_and_counts_only_the": _LABELS,
    "tests/maintain/test_reindex.py": _OWNER,
    "tests/maintain/test_kill.py::test_reindex_killed_mid_way_and_in_the_swap": _OWNER,
    "tests/maintain/test_undo.py::test_unknown_run_and_reindex_runs": _OWNER,
    "tests/retrieve/test_late_local.py::test_reindex_force_fills": _OWNER,
    "tests/retrieve/test_late_local.py::test_rows_written_while_reindex_runs": _OWNER,
    "tests/foundation/test_store_health_stats.py::test_health_checks_and_repairs": _OWNER,
    "tests/reliability/test_doctor.py::test_broken_fts_is_rebuilt": _OWNER,
    "tests/maintain/test_consolidate.py::test_fts_backstop_rebuilds_a_broken_index": _OWNER,
    "tests/echo/test_echo_search.py::test_fts_down_is_vector_only_either_way": _OWNER,
    "tests/retrieve/test_pipeline_degraded.py::test_fts_unavailable_gives_vector_results": _OWNER,
    "tests/retrieve/test_cli_search.py::test_degradation_is_on_stderr_and_in_every_result":
        _OWNER,
    "tests/retrieve/test_search_store.py::test_vectors_and_lexical_of_the_brain": _OWNER,
    "tests/privacy/test_purge_decodes.py": _PURGE,
    "tests/privacy/test_secrets_everywhere.py::test_no_run_of_any_secret_is_stored": _PURGE,
    "tests/reliability/test_security.py::test_api_keys_are_never_printed_logged_or_stored":
        _PURGE,
    "tests/reliability/test_security.py::test_forget_session_leaves_no_copy_in_the_file": _PURGE,
    "tests/reliability/test_security.py::test_forget_hard_leaves_no_copy_in_the_file": _PURGE,
    "tests/reliability/test_security.py::test_forget_hard_says_when_a_reader_keeps": _PURGE,
    "tests/foundation/test_cli_core.py::test_newer_schema_exit_78": _SCHEMA,
    "tests/foundation/test_store.py::test_newer_schema_is_refused": _SCHEMA,
    "tests/postgres/test_bad_input.py::test_a_schema_newer_than_this_hippo_is_78": _SCHEMA,
    "tests/maintain/test_validity.py::test_the_migration_backfills_validity": _SCHEMA,
    "tests/layers/test_context.py::test_empty_database_prints_nothing": _EMPTY,
    "tests/layers/test_session_end.py::test_read_only_log_dir_is_reported": _EMPTY,
    "tests/reliability/test_dbfiles.py::test_read_commands_never_create_a_database": _EMPTY,
}


def team_skip(nodeid: str) -> str | None:
    """Why the team-store run skips this test, or None (see `TEAM_SKIPS`)."""
    if not team_mode():
        return None
    return next((why for prefix, why in TEAM_SKIPS.items() if nodeid.startswith(prefix)), None)


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
