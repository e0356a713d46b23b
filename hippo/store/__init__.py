"""The store: every read and write of hippo's data goes through it.

`connect(path)` opens one and returns a `Store` (`hippo.store.base`); its repositories
(`store.memories`, `store.chunks`, ...) speak the domain, each written once for both
backends over the seam (`hippo.store.sql`). Nothing outside this package builds SQL or
touches a connection: SQLite's parts (apsw, sqlite-vec, FTS5, the file) are in
`hippo.store.sqlite`, PostgreSQL's in `hippo.store.postgres`
(tests/foundation/test_store_seam.py checks it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hippo.config import is_server
from hippo.store.base import Mode, Row, Store
from hippo.store.sqlite.database import HOOK_WAIT_MS
from hippo.store.sqlite.errors import skippable as sqlite_skippable
from hippo.store.sqlite.files import (
    check_private_dir,
    clear_corrupt,
    corrupt_marker,
    mark_corrupt,
    unwritable,
)

if TYPE_CHECKING:
    from hippo.store.sqlite.salvage import Reader as SalvageReader
    from hippo.store.sqlite.salvage import Report as SalvageReport

__all__ = [
    "HOOK_WAIT_MS", "Mode", "Row", "Store", "check_private_dir", "clear_corrupt", "connect",
    "corrupt_marker", "mark_corrupt", "rebuild", "salvage_reader", "skippable", "team",
    "unwritable",
]


def connect(path: Path | str, *, busy_timeout_ms: int = 5000, mode: Mode = "write",
            check: bool = True, migrate: bool = True, index: Any = None) -> Store:
    """Open the store at `path`: a SQLite file (`hippo.store.sqlite.database.connect`), or
    a PostgreSQL server when `path` is a `postgresql://` URL (`hippo.store.postgres`).

    `index`: the in-memory vector index a warm process keeps of this SQLite file
    (`hippo.warm.index.WarmIndex`): the store's `vectors` answer Brain KNN from it.
    A server's store scans its own (pgvector): no index."""
    if is_server(path):
        return postgres_module("database").connect(
            str(path), busy_timeout_ms=busy_timeout_ms, mode=mode, check=check, migrate=migrate)
    from hippo.store.sqlite.database import connect as sqlite_connect

    return sqlite_connect(Path(path), busy_timeout_ms=busy_timeout_ms, mode=mode, check=check,
                          migrate=migrate, index=index)


def skippable(exc: BaseException) -> bool:
    """A cache write a read command may skip: the store is busy (another process writes)
    or cannot be written here (a read-only file, a role without write rights)."""
    if sqlite_skippable(exc):
        return True
    if "psycopg" in sys.modules:  # only a server's store can have raised its errors
        from hippo.store.postgres.errors import skippable as pg_skippable

        return pg_skippable(exc)
    return False


def salvage_reader(path: Path | str) -> SalvageReader:
    """Every readable row of the damaged store at `path`, read-only, past damaged pages:
    `reader.read(table, columns)` yields them, `reader.report` says what could not be read."""
    from hippo.store.sqlite.salvage import Reader

    return Reader(path)


def rebuild(path: Path) -> tuple[SalvageReport, Path]:
    """Salvage the damaged store at `path` into a new one that takes its place; returns what
    was read and where the damaged file was kept (`hippo doctor --fix`)."""
    from hippo.store.sqlite.salvage import rebuild as sqlite_rebuild

    return sqlite_rebuild(path)



def team(url: str) -> ModuleType:
    """What `hippo team` sets up a team store with (`hippo.store.postgres.team`: `init`,
    `add_member`); only a PostgreSQL store is one."""
    if not is_server(url):
        from hippo.errors import UsageError

        raise UsageError("`hippo team` sets up a PostgreSQL store: give --db postgresql://... "
                         "(an administrator's URL)")
    return postgres_module("team")


def postgres_module(module: str) -> ModuleType:
    """`hippo.store.postgres.MODULE`, or one line saying the driver is missing (exit 78).
    (Not named `postgres`: importing the subpackage sets that attribute of this package.)"""
    import importlib

    try:
        return importlib.import_module(f"hippo.store.postgres.{module}")
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        from hippo.errors import ConfigError

        raise ConfigError("a postgresql:// database needs the PostgreSQL driver, which "
                          "is not installed: pip install 'hippo[postgres]'") from None
