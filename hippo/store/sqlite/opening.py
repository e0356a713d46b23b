"""Opening the SQLite file: the connection (read-only file systems included), sqlite-vec,
the pragmas, the refusal of a file that is not hippo's, and the schema steps on open."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from hippo.errors import ConfigError, NoDatabase
from hippo.store.sqlite.files import _filesystem_state, tighten

if TYPE_CHECKING:
    from hippo.store.base import Mode
    from hippo.store.sqlite.database import Database


def _vec_extension_path() -> str:
    # Importing sqlite_vec pulls in numpy (~0.15 s); find its loadable file without importing it.
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("sqlite-vec is not installed; reinstall hippo (pip install hippo)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def _configure(conn: apsw.Connection, path: Path, mode: Mode, busy_timeout_ms: int, *,
               check: bool, memory: bool) -> None:
    """sqlite-vec, the pragmas, the file's kind (refused when not hippo's) and, to write,
    WAL mode."""
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
    kind = "empty" if memory else _kind(conn, path)
    if check and not memory and (kind == "hippo" or mode == "write"):
        tighten(path)  # only once it is ours: another application's file is left alone
    if mode == "read" and kind == "empty":
        raise NoDatabase(f"database {path} is empty: nothing stored yet (`hippo add` or "
                         "`hippo ingest` creates it)")
    if mode == "write":
        jm = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if jm and str(jm[0]).lower() not in ("wal", "memory"):
            conn.execute("PRAGMA journal_mode=WAL")


def _schema(db: Database, migrate: bool) -> None:
    """To write, apply the missing schema steps; to read, refuse a file that lacks some."""
    from hippo.store.migrations import refuse_older
    from hippo.store.sqlite.migrations import READERS_NEED_NOT, pending
    from hippo.store.sqlite.migrations import migrate as run_migrations

    if db.mode == "write":
        if migrate:
            run_migrations(db)
    elif migrate:
        refuse_older(str(db.path), [step for step in pending(db) if step not in READERS_NEED_NOT],
                     "`hippo doctor --fix` (or any command that writes)")


def _open(path: Path, mode: Mode, busy_timeout_ms: int) -> apsw.Connection:
    """The connection, with its busy timeout set before its first statement (a read's probe
    below meets a writer that is creating the file or closing its WAL: it must wait, not
    fail). A read on a read-only file system, where SQLite cannot create the WAL index
    beside a cleanly closed file, reads it as immutable (nothing can change it)."""
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(busy_timeout_ms)
    if mode != "read" or str(path) == ":memory:":
        return conn
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (apsw.CantOpenError, apsw.ReadOnlyError) as exc:
        conn.close()
        if Path(f"{path}-wal").exists() or _filesystem_state(path) != "read-only":
            raise exc from None
        from urllib.parse import quote

        return apsw.Connection(f"file:{quote(str(path.resolve()))}?immutable=1",
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    return conn


def _kind(conn: apsw.Connection, path: Path) -> str:
    """"empty" (no tables yet), "hippo", or refused: another application's database."""
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    if not [n for n in names if n != "_migrations"]:
        return "empty"
    if "_migrations" in names and conn.execute(
            "SELECT 1 FROM _migrations WHERE name = '0001_core'").fetchone():
        return "hippo"
    shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
    raise ConfigError(f"{path} is not a hippo database (it holds other tables: {shown}); "
                      "hippo leaves it alone: choose another --db (or HIPPO_DB)")
