"""The schema's SQL steps, as shipped: the text each named step of
`hippo.store.sqlite.migrations` runs. Never edit a step that has shipped: append a new one.
"""

from __future__ import annotations

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

# A warm process (`hippo.warm.index`) holds each store's Brain vectors in memory and must
# see every change another process makes to them before its next search. Every write of a
# memory's vector (put, drop, hence erase) records the memory's id here under a sequence
# number above every other one, in the same transaction: the ids changed since what a
# process holds are those with a larger `seq`. Ids only, never text; a row stays when its
# vector goes (that is the change to see). A table swap (reindex) changes the schema
# instead, which a warm index checks too.
M0008_VECTOR_LOG = """
CREATE TABLE vector_log (
  memory_id INTEGER PRIMARY KEY,
  seq       INTEGER NOT NULL
);
CREATE INDEX vector_log_seq ON vector_log(seq);
"""

# Validity in time (issue 32): `valid_from`, when the memory's source said it (the earliest
# linked Echo chunk's start, in the canonical form, else when the memory was made); `valid_to`, when a later memory
# replaced it (set with `superseded_by`: the supersede's audit time, else its last update).
# A read command needs this step: every record carries the two fields.
M0009_VALIDITY = """
ALTER TABLE memories ADD COLUMN valid_from TEXT;
ALTER TABLE memories ADD COLUMN valid_to TEXT;
UPDATE memories SET valid_from = coalesce((
  SELECT strftime('%Y-%m-%dT%H:%M:%fZ', min(c.started_at))
  FROM memory_sources s JOIN echo_chunks c ON c.id = s.chunk_id
  WHERE s.memory_id = memories.id), created_at);
UPDATE memories SET valid_to = coalesce((
  SELECT max(a.at) FROM audit a WHERE a.memory_id = memories.id AND a.action = 'supersede'),
  updated_at) WHERE superseded_by IS NOT NULL;
"""
