"""Named, append-only schema steps, recorded in `_migrations` and applied on open: what the
two backends' runners share (`hippo.store.sqlite.migrations`, `hippo.store.postgres.
migrations`, which hold the steps and apply them under their own locking)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.errors import ConfigError
from hippo.store.sql import render

if TYPE_CHECKING:
    from hippo.store.sql import Sql

LEDGER = ("CREATE TABLE IF NOT EXISTS _migrations ("
          "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
APPLIED = "SELECT name FROM _migrations ORDER BY applied_at, name"
RECORD = "INSERT INTO _migrations(name, applied_at) VALUES (?, {now})"


def applied(db: Sql) -> list[str]:
    """The steps this database has, in the order they were applied."""
    return [r["name"] for r in db.rows(APPLIED)] if db.has_table("_migrations") else []


def pending(db: Sql, known: Sequence[str], label: str) -> list[str]:
    """The steps of `known` this database lacks, without changing it; a schema with a step
    this hippo does not know is refused (78)."""
    done = applied(db)
    refuse_newer(label, known, done)
    return [name for name in known if name not in done]


def refuse_newer(label: str, known: Sequence[str], done: Sequence[str]) -> None:
    newer = [name for name in done if name not in known]
    if newer:
        raise ConfigError(f"database {label} has schema step {newer[-1]!r}, newer than this "
                          "hippo; upgrade hippo (pip install -U hippo) to use it")


def record(db: Sql, name: str) -> None:
    db.execute(render(db.dialect, RECORD), (name,))


def refuse_older(label: str, waiting: Sequence[str], fix: str) -> None:
    """A read command never changes the schema: one that lacks `waiting` is refused (78)."""
    if waiting:
        raise ConfigError(
            f"database {label} was written by an older hippo and needs {len(waiting)} schema "
            f"step{'s' * (len(waiting) != 1)} ({waiting[-1]}); a read command never changes "
            f"it: run {fix}")
