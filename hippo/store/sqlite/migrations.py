"""Named, append-only, transactional schema steps, recorded in `_migrations`, applied on open.

Never edit or reorder a step that has shipped: append a new one (the SQL text of the steps
is in `hippo.store.sqlite.schema`).
Vector tables depend on the embedding model's dimension and are created by
`hippo.embed.cache.ensure_store` when a store first receives vectors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from hippo.errors import ConfigError
from hippo.store import migrations as steps
from hippo.store.sqlite.schema import (
    M0001_CORE,
    M0002_MAINTAIN,
    M0003_TERNARY_TOKENS,
    M0004_VERIFIED_AT,
    M0005_PROJECT_DIRS,
    M0006_PRIVATE_CACHES,
    M0008_VECTOR_LOG,
    M0009_VALIDITY,
)

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database, Sql

# Ids are never reused (issue 17). Without AUTOINCREMENT SQLite hands out max(id) + 1, so
# after `echo --forget-session`, a re-read file or an `undo` the next row took the id of
# one that was gone: provenance links, the extract watermark and undo's history then named
# the wrong row. Each table is rebuilt (the documented 12-step way, foreign keys off: see
# `migrate`) from its own current CREATE statement with AUTOINCREMENT added, so columns a
# later step added come along; its rows, ids, indexes and triggers are kept, and the FTS
# tables stay in step because their rowids do not change. Each sequence starts above the
# largest id anything still names: rows, the audit log, provenance links, watermarks.
# Timestamps stored before one canonical form was enforced (a year below 1000 unpadded)
# are rewritten in it, so text order stays time order.
AUTOINCREMENT_TABLES = ("memories", "echo_sessions", "echo_chunks")
SEQUENCE_FLOOR = {
    "memories": (
        "SELECT max(id) FROM memories", "SELECT max(memory_id) FROM audit",
        "SELECT max(memory_id) FROM memory_sources",
        "SELECT max(max(a, b)) FROM keep_apart",
    ),
    "echo_sessions": (
        "SELECT max(id) FROM echo_sessions", "SELECT max(session_id) FROM echo_chunks",
        "SELECT max(session_id) FROM watermarks",
    ),
    "echo_chunks": (
        "SELECT max(id) FROM echo_chunks", "SELECT max(chunk_id) FROM memory_sources",
        "SELECT max(CAST(value AS INTEGER)) FROM meta WHERE key = 'extract.last_chunk_id'",
        # chunk ids a memory's `source` record or a link in the audit log still names
        ("SELECT max(j.value) FROM memories m, json_each(m.source, '$.chunks') j "
        "WHERE json_valid(m.source) AND json_type(m.source, '$.chunks') = 'array' "
        "AND j.type = 'integer'"),
        ("SELECT max(j.value) FROM audit a, json_each(coalesce(a.after, a.before), "
        "'$.chunks') j WHERE a.action IN ('link', 'unlink') "
        "AND json_valid(coalesce(a.after, a.before)) "
        "AND json_type(coalesce(a.after, a.before), '$.chunks') = 'array' "
        "AND j.type = 'integer'"),
    ),
}
_ROWID_PK = re.compile(r"\bid\s+INTEGER\s+PRIMARY\s+KEY\b(?!\s+AUTOINCREMENT)", re.IGNORECASE)
TIME_COLUMNS = {
    "memories": ("created_at", "updated_at", "confirmed_at", "verified_at"),
    "echo_chunks": ("started_at", "ended_at"),
    "echo_sessions": ("started_at", "ended_at"),
}
UNPADDED = ("[0-9]-*", "[0-9][0-9]-*", "[0-9][0-9][0-9]-*")


def m0007_ids_never_reused(db: Database) -> None:
    for table in AUTOINCREMENT_TABLES:
        _rebuild_autoincrement(db, table)
        floor = max((int(v) for sql in SEQUENCE_FLOOR[table]
                     if (v := db.scalar(sql)) is not None), default=0)
        db.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
        db.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", (table, floor))
    _canonical_times(db)


def _rebuild_autoincrement(db: Database, table: str) -> None:
    create = db.scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                       (table,))
    if not create or re.search(r"\bAUTOINCREMENT\b", create, re.IGNORECASE):
        return
    new_sql, n = _ROWID_PK.subn("id INTEGER PRIMARY KEY AUTOINCREMENT", create, count=1)
    if n != 1:
        raise ConfigError(f"cannot find the id column of {table} in {create!r}")
    head = re.match(r"\s*CREATE\s+TABLE\s+(\"?)" + table + r"\1", new_sql, re.IGNORECASE)
    assert head is not None
    new_sql = f"CREATE TABLE {table}__new" + new_sql[head.end():]
    # Indexes and triggers go with the old table: recreate them from their own text.
    extras = [r[0] for r in db.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
        "AND sql IS NOT NULL ORDER BY type, name", (table,))]
    db.execute(new_sql)
    db.execute(f"INSERT INTO {table}__new SELECT * FROM {table}")  # same columns, same order
    db.execute(f"DROP TABLE {table}")
    # Legacy rename: only this table's own statement changes; no other object is reparsed.
    db.execute("PRAGMA legacy_alter_table = ON")
    try:
        db.execute(f"ALTER TABLE {table}__new RENAME TO {table}")
    finally:
        db.execute("PRAGMA legacy_alter_table = OFF")
    for sql in extras:
        db.execute(sql)


def _canonical_times(db: Database) -> None:
    """Pad the years strftime wrote unpadded (`100-01-01T...` -> `0100-01-01T...`)."""
    for table, columns in TIME_COLUMNS.items():
        for col in columns:
            # keys come from TIME_COLUMNS, never from input
            db.execute(f"UPDATE {table} SET {col} = substr('000' || {col}, "
                       f"instr({col}, '-') - 1) "
                       f"WHERE {col} GLOB ? OR {col} GLOB ? OR {col} GLOB ?", UNPADDED)


Step = str | Callable[["Database"], None]
# Steps that rebuild a table run with foreign keys off (SQLite's documented way: dropping
# the old table must not cascade into the rows that point at it); the new table is checked
# to point where the old one did before the step commits.
REBUILDS = frozenset({"0007_ids_never_reused"})

MIGRATIONS: tuple[tuple[str, Step], ...] = (
    ("0001_core", M0001_CORE),
    ("0002_maintain", M0002_MAINTAIN),
    ("0003_ternary_tokens", M0003_TERNARY_TOKENS),
    ("0004_verified_at", M0004_VERIFIED_AT),
    ("0005_project_dirs", M0005_PROJECT_DIRS),
    ("0006_private_caches", M0006_PRIVATE_CACHES),
    ("0007_ids_never_reused", m0007_ids_never_reused),
    ("0008_vector_log", M0008_VECTOR_LOG),
    ("0009_validity", M0009_VALIDITY),
)


# Steps a read command does without: they add what only an optional reader uses (the
# vector log a warm server's index syncs from; without it the store's own KNN answers), so
# a search on a file no writer has migrated yet is not refused for their sake.
READERS_NEED_NOT = frozenset({"0008_vector_log"})


def _apply(db: Database, step: Step, *, check_keys: bool) -> None:
    before = len(db.rows("PRAGMA foreign_key_check")) if check_keys else 0
    if isinstance(step, str):
        for _ in db.execute(step):  # apsw runs the statements after one that returns rows
            pass  # (a PRAGMA) only as its cursor is read
    else:
        step(db)
    if check_keys and len(db.rows("PRAGMA foreign_key_check")) > before:
        raise ConfigError("schema step broke a foreign key; nothing was changed")


def pending(db: Sql) -> list[str]:
    """The steps this file lacks, without changing it (a read command's open); a newer
    schema is refused all the same."""
    return steps.pending(db, [name for name, _ in MIGRATIONS], str(db.path))


def migrate(db: Database) -> list[str]:
    """Apply every missing step, each in its own transaction; refuse a newer schema."""
    db.execute(steps.LEDGER)
    done: list[str] = []
    for name in pending(db):
        rebuild = name in REBUILDS
        if rebuild:  # a no-op inside a transaction: set before BEGIN
            db.execute("PRAGMA foreign_keys = OFF")
        try:
            with db.transaction():
                if db.scalar("SELECT 1 FROM _migrations WHERE name = ?", (name,)):
                    continue  # another process applied it while we waited for the lock
                _apply(db, dict(MIGRATIONS)[name], check_keys=rebuild)
                steps.record(db, name)
        finally:
            if rebuild:
                db.execute("PRAGMA foreign_keys = ON")
        done.append(name)
    if done[:1] == ["0001_core"]:  # a new file: every token matrix it gets is compact
        from hippo.store.embed_cache import TOKENS_DISTINCT_KEY

        db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, '1')",
                   (TOKENS_DISTINCT_KEY,))
    return done
