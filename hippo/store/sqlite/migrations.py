"""Named, append-only, transactional schema steps, recorded in `_migrations`, applied on open.

Never edit or reorder a step that has shipped: append a new one.
Vector tables depend on the embedding model's dimension and are created by
`hippo.vectors.ensure_store` when a store first receives vectors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from hippo.errors import ConfigError

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

M0001_CORE = """
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE memories (
  id                INTEGER PRIMARY KEY,
  text              TEXT NOT NULL,
  type              TEXT NOT NULL,
  tier              TEXT NOT NULL,
  project           TEXT,
  tags              TEXT NOT NULL DEFAULT '[]',
  importance        REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  author            TEXT NOT NULL DEFAULT 'human' CHECK (author IN ('human', 'machine')),
  status            TEXT NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'done', 'consolidated', 'retired', 'deleted')),
  pinned            INTEGER NOT NULL DEFAULT 0,
  canonical         INTEGER NOT NULL DEFAULT 0,
  confidence        REAL NOT NULL DEFAULT 0.5,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  confirmed_at      TEXT,
  consolidated_into INTEGER REFERENCES memories(id),
  superseded_by     INTEGER REFERENCES memories(id),
  source            TEXT,
  dedup_key         TEXT NOT NULL,
  content_hash      TEXT NOT NULL
);
CREATE INDEX memories_dedup ON memories(dedup_key);
CREATE INDEX memories_scope ON memories(status, project, type);
CREATE INDEX memories_created ON memories(created_at);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  text, tags, content='memories', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, text, tags)
  VALUES ('delete', old.id, old.text, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF text, tags ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, text, tags)
  VALUES ('delete', old.id, old.text, old.tags);
  INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;

-- Provenance links from a Brain memory to the Echo chunks it came from.
CREATE TABLE memory_sources (
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  chunk_id  INTEGER NOT NULL,
  added_at  TEXT NOT NULL,
  PRIMARY KEY (memory_id, chunk_id)
) WITHOUT ROWID;
CREATE INDEX memory_sources_chunk ON memory_sources(chunk_id);

-- Append-only history of every change to a memory.
CREATE TABLE audit (
  id        INTEGER PRIMARY KEY,
  memory_id INTEGER NOT NULL,
  run_id    TEXT,
  actor     TEXT NOT NULL,
  action    TEXT NOT NULL,
  at        TEXT NOT NULL,
  before    TEXT,
  after     TEXT
);
CREATE INDEX audit_memory ON audit(memory_id);
CREATE INDEX audit_run ON audit(run_id);

CREATE TABLE echo_sessions (
  id             INTEGER PRIMARY KEY,
  session_key    TEXT NOT NULL UNIQUE,
  format         TEXT NOT NULL,
  source_path    TEXT NOT NULL,
  project        TEXT,
  cwd            TEXT,
  parent_key     TEXT,
  agent          TEXT,
  started_at     TEXT,
  ended_at       TEXT,
  messages       INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE echo_chunks (
  id           INTEGER PRIMARY KEY,
  session_id   INTEGER NOT NULL REFERENCES echo_sessions(id) ON DELETE CASCADE,
  seq          INTEGER NOT NULL,
  source_path  TEXT NOT NULL,
  project      TEXT,
  roles        TEXT NOT NULL,
  line_start   INTEGER,
  line_end     INTEGER,
  message_ids  TEXT NOT NULL DEFAULT '[]',
  started_at   TEXT,
  ended_at     TEXT,
  text         TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  UNIQUE (session_id, seq)
);
CREATE INDEX echo_chunks_time ON echo_chunks(started_at);

CREATE VIRTUAL TABLE echo_fts USING fts5(
  text, content='echo_chunks', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER echo_fts_ai AFTER INSERT ON echo_chunks BEGIN
  INSERT INTO echo_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER echo_fts_ad AFTER DELETE ON echo_chunks BEGIN
  INSERT INTO echo_fts(echo_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER echo_fts_au AFTER UPDATE OF text ON echo_chunks BEGIN
  INSERT INTO echo_fts(echo_fts, rowid, text) VALUES ('delete', old.id, old.text);
  INSERT INTO echo_fts(rowid, text) VALUES (new.id, new.text);
END;

-- How far each transcript file has been read.
CREATE TABLE watermarks (
  path        TEXT PRIMARY KEY,
  offset      INTEGER NOT NULL DEFAULT 0,
  line        INTEGER NOT NULL DEFAULT 0,
  head_hash   TEXT,
  size        INTEGER,
  mtime       REAL,
  format      TEXT,
  session_id  INTEGER,
  complete    INTEGER NOT NULL DEFAULT 0,
  updated_at  TEXT NOT NULL
);

-- Vectors already computed, keyed by model and content hash (documents and queries).
CREATE TABLE embed_cache (
  model        TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector       BLOB NOT NULL,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (model, content_hash)
) WITHOUT ROWID;

CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  job         TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  outcome     TEXT,
  summary     TEXT
);
CREATE INDEX runs_job ON runs(job, started_at);

CREATE TABLE locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  pid         INTEGER,
  acquired_at TEXT NOT NULL
);

-- Spend caps and circuit breakers of paid/remote providers; survives across processes.
CREATE TABLE guard (
  provider             TEXT PRIMARY KEY,
  day                  TEXT,
  calls                INTEGER NOT NULL DEFAULT 0,
  tokens               INTEGER NOT NULL DEFAULT 0,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  open_until           REAL,
  last_error           TEXT
);
"""

M0002_MAINTAIN = """
-- Pairs of memories a person separated by undoing the merge that joined them
-- (`hippo undo` of a consolidate run): consolidation never merges them again.
CREATE TABLE keep_apart (
  a      INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  b      INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  at     TEXT NOT NULL,
  PRIMARY KEY (a, b),
  CHECK (a < b)
) WITHOUT ROWID;
CREATE INDEX keep_apart_run ON keep_apart(run_id);
"""

# (name, sql) — append only.
# Late interaction's token matrices moved from int8 rows ("<model>#tokens") to ternary
# bit planes ("<model>#tokens-t1", `hippo.retrieve.tokenmatrix.TokenMatrix`): the old rows are
# never read again. They are a cache: a search re-encodes what it needs.
M0003_TERNARY_TOKENS = """
DELETE FROM embed_cache WHERE model LIKE '%#tokens';
"""

# When a person last verified a memory (`hippo verify`). `confirmed_at` cannot tell: a
# reinforcement by extraction sets it too, and a machine-written rule or preference enters
# the rule floor only once a person verified or pinned it. Verifications made before this
# step are in the audit log, written by the human actor.
M0004_VERIFIED_AT = """
ALTER TABLE memories ADD COLUMN verified_at TEXT;
UPDATE memories SET verified_at = (
  SELECT max(a.at) FROM audit a
  WHERE a.memory_id = memories.id AND a.action = 'verify' AND a.actor = 'human'
);
"""

# Every git worktree of a repository is one project (`hippo.project`). A worktree is
# usually gone when its sessions are ingested, so each one a command or hook runs in is
# recorded here; ingest reads the longest recorded directory holding a session's cwd.
# `project_moves` keeps what `hippo project rename/merge` changed outside the memories
# (which the audit log covers), so `hippo undo` can put it back.
M0005_PROJECT_DIRS = """
CREATE TABLE project_dirs (
  path       TEXT PRIMARY KEY,
  project    TEXT NOT NULL,
  common_dir TEXT,
  seen_at    TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX project_dirs_project ON project_dirs(project);

CREATE TABLE project_moves (
  run_id  TEXT NOT NULL,
  tbl     TEXT NOT NULL CHECK (tbl IN ('echo_sessions', 'echo_chunks', 'project_dirs',
                                       'memories')),
  row_key TEXT NOT NULL,
  before  TEXT,
  after   TEXT,
  PRIMARY KEY (run_id, tbl, row_key)
) WITHOUT ROWID;
"""

# Nothing erased can be read back (docs/privacy.md). The FTS indexes drop a deleted row's
# terms at once instead of leaving delete markers over segments that still hold them
# (FTS5 'secure-delete', SQLite 3.42+; a persistent option of each table). A query's
# token matrix is no longer cached with its token ids, whose ids spell the query out:
# the token matrices no stored text has are queries' (or leftovers of a purge), so they go.
M0006_PRIVATE_CACHES = """
PRAGMA secure_delete = ON;
INSERT INTO memories_fts(memories_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO echo_fts(echo_fts, rank) VALUES ('secure-delete', 1);
DELETE FROM embed_cache WHERE model LIKE '%#tokens-t1'
  AND content_hash NOT IN (SELECT content_hash FROM memories)
  AND content_hash NOT IN (SELECT content_hash FROM echo_chunks);
"""


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
)


def _apply(db: Database, step: Step, *, check_keys: bool) -> None:
    before = len(db.rows("PRAGMA foreign_key_check")) if check_keys else 0
    if isinstance(step, str):
        for _ in db.execute(step):  # apsw runs the statements after one that returns rows
            pass  # (a PRAGMA) only as its cursor is read
    else:
        step(db)
    if check_keys and len(db.rows("PRAGMA foreign_key_check")) > before:
        raise ConfigError("schema step broke a foreign key; nothing was changed")


def _newer(db: Database, applied: list[str]) -> None:
    known = [name for name, _ in MIGRATIONS]
    newer = [name for name in applied if name not in known]
    if newer:
        raise ConfigError(
            f"database {db.path} has schema step {newer[-1]!r}, newer than this hippo; "
            "upgrade hippo (pip install -U hippo)"
        )


def pending(db: Database) -> list[str]:
    """The steps this file lacks, without changing it (a read command's open); a newer
    schema is refused all the same."""
    import apsw

    try:
        applied = [r[0] for r in db.execute("SELECT name FROM _migrations")]
    except apsw.SQLError:  # no table yet: every step is pending
        applied = []
    _newer(db, applied)
    return [name for name, _ in MIGRATIONS if name not in applied]


def migrate(db: Database) -> list[str]:
    """Apply every missing step, each in its own transaction; refuse a newer schema."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    applied = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    _newer(db, applied)
    done: list[str] = []
    for name, step in MIGRATIONS:
        if name in applied:
            continue
        rebuild = name in REBUILDS
        if rebuild:  # a no-op inside a transaction: set before BEGIN
            db.execute("PRAGMA foreign_keys = OFF")
        try:
            with db.transaction():
                if db.scalar("SELECT 1 FROM _migrations WHERE name = ?", (name,)):
                    continue  # another process applied it while we waited for the lock
                _apply(db, step, check_keys=rebuild)
                db.execute(
                    "INSERT INTO _migrations(name, applied_at) "
                    "VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                    (name,),
                )
        finally:
            if rebuild:
                db.execute("PRAGMA foreign_keys = ON")
        done.append(name)
    if done[:1] == ["0001_core"]:  # a new file: every token matrix it gets is compact
        from hippo.store.tokens import TOKENS_DISTINCT_KEY

        db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, '1')",
                   (TOKENS_DISTINCT_KEY,))
    return done
