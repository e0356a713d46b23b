"""The PostgreSQL schema's SQL steps, as shipped: the text each named step of
`hippo.store.postgres.migrations` runs. Never edit a step that has shipped: append one.

The tables are SQLite's (`hippo.store.sqlite.schema`) at its latest step, in PostgreSQL's
types: ids are identities (never reused, as SQLite's AUTOINCREMENT), times stay ISO-8601
text (text order is time order, as in SQLite), JSON stays text. Full text is a generated
`tsvector` with a GIN index, in `hippo_text`: Porter's English stemmer (FTS5's `porter`;
Snowball's `english` stems differently) without a stop-word list (FTS5 drops none
either), over the text split as unicode61 splits it (`hippo_words`); `tsv_len` is its
length in tokens, for BM25 (`postgres.lexical`). The vector tables depend on the model's
dimension and are created with a store's first vectors (`vectors.create`). Who did what:
`hippo.user` (set per connection from HIPPO_USER) or else the database role; on a team
store, always the role (`hippo.store.postgres.team_sql` sets the defaults to `current_user`).
"""

from __future__ import annotations

# The user a row is recorded for: HIPPO_USER as the connection set it, else the role.
USER = "coalesce(nullif(current_setting('hippo.user', true), ''), session_user)"

P0001_CORE = f"""
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TEXT SEARCH DICTIONARY hippo_stem (TEMPLATE = snowball, LANGUAGE = porter);
CREATE TEXT SEARCH CONFIGURATION hippo_text (COPY = pg_catalog.simple);
ALTER TEXT SEARCH CONFIGURATION hippo_text
  ALTER MAPPING FOR asciiword, word, numword, hword, hword_part, hword_asciipart,
                    asciihword, hword_numpart, numhword
  WITH hippo_stem;

-- Text as FTS5's unicode61 tokenizer splits it: every run of letters and digits is a
-- word, everything else separates (PostgreSQL's parser would keep `src/app.py`, `3.14`
-- or an e-mail address whole, and add `foo-bar` beside `foo` and `bar`), with Latin
-- letters' diacritics removed as `remove_diacritics 2` removes them (é is e, ſ is s).
-- FTS5's porter leaves a word of two letters alone, where PostgreSQL's makes `us` `u`
-- (not `us`, the stem of `use` and `uses`): `us`, `as`, `is`... are read as `use`,
-- `ase`, `ise`, which it stems to them. (`vs` still becomes `v`, `ay` `ai`.)
CREATE FUNCTION hippo_words(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN regexp_replace(regexp_replace(translate($1,
    'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔ'
    'ĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭ'
    'ŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑ'
    'ȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭ'
    'ḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵ'
    'ṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂể'
    'ỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹſẛ',
    'AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeE'
    'eEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUu'
    'UuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRr'
    'RrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIi'
    'IiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUu'
    'UuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwyAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEe'
    'EeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYyss'),
    '[^[:alnum:]]+', ' ', 'g'),
    '(^| )([aeiouAEIOU][sS])(?= |$)', '\\1\\2e', 'g');
CREATE FUNCTION hippo_doc(text) RETURNS tsvector LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN to_tsvector('hippo_text', hippo_words($1));
-- A text's length in tokens (BM25's document length): its lexemes' positions.
CREATE FUNCTION hippo_doc_len(text) RETURNS integer LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (SELECT coalesce(sum(cardinality(u.positions)), 0)::integer
          FROM unnest(hippo_doc($1)) AS u);
-- How often the phrase `lexemes` (in order, adjacent) occurs in `doc` (BM25's frequency).
CREATE FUNCTION hippo_phrase_freq(doc tsvector, lexemes text[]) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (SELECT count(*)::integer FROM unnest(doc) AS a, unnest(a.positions) AS p(pos)
          WHERE a.lexeme = lexemes[1] AND NOT EXISTS (
            SELECT 1 FROM generate_subscripts(lexemes, 1) AS j(j)
            WHERE j > 1 AND NOT EXISTS (
              SELECT 1 FROM unnest(doc) AS b
              WHERE b.lexeme = lexemes[j] AND p.pos + j - 1 = ANY(b.positions))));

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- A new store: every token matrix it gets is compact (`hippo.store.embed_cache`).
INSERT INTO meta(key, value) VALUES ('tokens.distinct', '1');

-- References between memories are DEFERRABLE (checked at once unless a transaction says
-- `SET CONSTRAINTS ALL DEFERRED`: an import or undo restores rows pointing at later ones).
CREATE TABLE memories (
  id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  text              TEXT NOT NULL,
  type              TEXT NOT NULL,
  tier              TEXT NOT NULL,
  project           TEXT,
  tags              TEXT NOT NULL DEFAULT '[]',
  importance        DOUBLE PRECISION NOT NULL DEFAULT 0.5
                    CHECK (importance >= 0 AND importance <= 1),
  author            TEXT NOT NULL DEFAULT 'human' CHECK (author IN ('human', 'machine')),
  status            TEXT NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'done', 'consolidated', 'retired', 'deleted')),
  pinned            INTEGER NOT NULL DEFAULT 0,
  canonical         INTEGER NOT NULL DEFAULT 0,
  confidence        DOUBLE PRECISION NOT NULL DEFAULT 0.5,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  confirmed_at      TEXT,
  consolidated_into BIGINT REFERENCES memories(id) DEFERRABLE,
  superseded_by     BIGINT REFERENCES memories(id) DEFERRABLE,
  source            TEXT,
  dedup_key         TEXT NOT NULL,
  content_hash      TEXT NOT NULL,
  verified_at       TEXT,
  tsv               tsvector GENERATED ALWAYS AS (
                      setweight(hippo_doc(text), 'A') || setweight(hippo_doc(tags), 'B')) STORED,
  tsv_len           INTEGER GENERATED ALWAYS AS (
                      hippo_doc_len(text) + hippo_doc_len(tags)) STORED
);
CREATE INDEX memories_dedup ON memories(dedup_key);
CREATE INDEX memories_scope ON memories(status, project, type);
CREATE INDEX memories_created ON memories(created_at);
CREATE INDEX memories_tsv ON memories USING gin (tsv);

-- BM25's statistics of every memory (`postgres.lexical`): how many, and their tokens,
-- kept by the triggers below as rows come, change and go (a query then reads one row,
-- not the table). A data-only restore must leave the triggers off (it brings this row).
CREATE TABLE lexical_stats (
  store  TEXT PRIMARY KEY,
  n      BIGINT NOT NULL,
  tokens BIGINT NOT NULL
);
INSERT INTO lexical_stats(store, n, tokens) VALUES ('brain', 0, 0);
CREATE FUNCTION hippo_lexical_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  dn BIGINT := 0;
  dt BIGINT := 0;
  c BIGINT;
  t BIGINT;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    SELECT count(*), coalesce(sum(tsv_len), 0) INTO c, t FROM old_rows;
    dn := dn - c;
    dt := dt - t;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    SELECT count(*), coalesce(sum(tsv_len), 0) INTO c, t FROM new_rows;
    dn := dn + c;
    dt := dt + t;
  END IF;
  IF dn <> 0 OR dt <> 0 THEN
    UPDATE lexical_stats SET n = n + dn, tokens = tokens + dt WHERE store = TG_ARGV[0];
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER memories_stats_added AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION hippo_lexical_stats('brain');
CREATE TRIGGER memories_stats_changed AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION hippo_lexical_stats('brain');
CREATE TRIGGER memories_stats_removed AFTER DELETE ON memories
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
  EXECUTE FUNCTION hippo_lexical_stats('brain');

-- Provenance links from a Brain memory to the Echo chunks it came from.
CREATE TABLE memory_sources (
  memory_id BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE DEFERRABLE,
  chunk_id  BIGINT NOT NULL,
  added_at  TEXT NOT NULL,
  PRIMARY KEY (memory_id, chunk_id)
);
CREATE INDEX memory_sources_chunk ON memory_sources(chunk_id);

-- Append-only history of every change to a memory, and who made it.
CREATE TABLE audit (
  id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  memory_id BIGINT NOT NULL,
  run_id    TEXT,
  actor     TEXT NOT NULL,
  action    TEXT NOT NULL,
  at        TEXT NOT NULL,
  before    TEXT,
  after     TEXT,
  by_user   TEXT NOT NULL DEFAULT {USER}
);
CREATE INDEX audit_memory ON audit(memory_id);
CREATE INDEX audit_run ON audit(run_id);

-- A session's transcript belongs to the user who ingested it (`owner`): only they see it
-- unless the team turns sharing on (meta `echo.shared`); each user's ingest keeps its own
-- sessions, so a key is unique per owner.
CREATE TABLE echo_sessions (
  id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  session_key    TEXT NOT NULL,
  format         TEXT NOT NULL,
  source_path    TEXT NOT NULL,
  project        TEXT,
  cwd            TEXT,
  parent_key     TEXT,
  agent          TEXT,
  started_at     TEXT,
  ended_at       TEXT,
  messages       INTEGER NOT NULL DEFAULT 0,
  owner          TEXT NOT NULL DEFAULT {USER},
  UNIQUE (owner, session_key)
);
CREATE INDEX echo_sessions_key ON echo_sessions(session_key);

CREATE TABLE echo_chunks (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  session_id   BIGINT NOT NULL REFERENCES echo_sessions(id) ON DELETE CASCADE,
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
  tsv          tsvector GENERATED ALWAYS AS (hippo_doc(text)) STORED,
  tsv_len      INTEGER GENERATED ALWAYS AS (hippo_doc_len(text)) STORED,
  UNIQUE (session_id, seq)
);
CREATE INDEX echo_chunks_time ON echo_chunks(started_at);
CREATE INDEX echo_chunks_file ON echo_chunks(source_path);
CREATE INDEX echo_chunks_tsv ON echo_chunks USING gin (tsv);

-- How far each user's ingest has read each of their transcript files (two users' files
-- may share a path, on two machines).
CREATE TABLE watermarks (
  owner       TEXT NOT NULL DEFAULT {USER},
  path        TEXT NOT NULL,
  "offset"    BIGINT NOT NULL DEFAULT 0,
  line        BIGINT NOT NULL DEFAULT 0,
  head_hash   TEXT,
  size        BIGINT,
  mtime       DOUBLE PRECISION,
  format      TEXT,
  session_id  BIGINT,
  complete    INTEGER NOT NULL DEFAULT 0,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (owner, path)
);

-- Vectors already computed, keyed by model and content hash (documents and queries).
CREATE TABLE embed_cache (
  model        TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector       BYTEA NOT NULL,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (model, content_hash)
);

CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  job         TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  outcome     TEXT,
  summary     TEXT
);
CREATE INDEX runs_job ON runs(job, started_at);

-- Who holds a job's lock; the lock itself is a session advisory lock (hippo.store.postgres.jobs).
CREATE TABLE locks (
  name        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL,
  pid         INTEGER,
  acquired_at TEXT NOT NULL,
  host        TEXT,
  by_user     TEXT NOT NULL DEFAULT {USER}
);

-- Spend caps and circuit breakers of paid/remote providers; survives across processes.
CREATE TABLE guard (
  provider             TEXT PRIMARY KEY,
  day                  TEXT,
  calls                BIGINT NOT NULL DEFAULT 0,
  tokens               BIGINT NOT NULL DEFAULT 0,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  open_until           DOUBLE PRECISION,
  last_error           TEXT
);

-- Pairs of memories a person separated by undoing the merge that joined them.
CREATE TABLE keep_apart (
  a      BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE DEFERRABLE,
  b      BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE DEFERRABLE,
  run_id TEXT NOT NULL,
  at     TEXT NOT NULL,
  PRIMARY KEY (a, b),
  CHECK (a < b)
);
CREATE INDEX keep_apart_run ON keep_apart(run_id);

-- Every git worktree of a repository is one project (`hippo.project`).
CREATE TABLE project_dirs (
  path       TEXT PRIMARY KEY,
  project    TEXT NOT NULL,
  common_dir TEXT,
  seen_at    TEXT NOT NULL
);
CREATE INDEX project_dirs_project ON project_dirs(project);

CREATE TABLE project_moves (
  run_id  TEXT NOT NULL,
  tbl     TEXT NOT NULL CHECK (tbl IN ('echo_sessions', 'echo_chunks', 'project_dirs',
                                       'memories')),
  row_key TEXT NOT NULL,
  before  TEXT,
  after   TEXT,
  PRIMARY KEY (run_id, tbl, row_key)
);
"""

# Validity in time (issue 32), as SQLite's step 0009_validity: `valid_from`, when the
# memory's source said it (the earliest linked Echo chunk's start, else its creation);
# `valid_to`, when a later memory replaced it (set with `superseded_by`).
P0002_VALIDITY = """
ALTER TABLE memories ADD COLUMN valid_from TEXT, ADD COLUMN valid_to TEXT;
UPDATE memories m SET valid_from = coalesce((
  SELECT to_char(min(c.started_at::timestamptz) AT TIME ZONE 'UTC',
                 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  FROM memory_sources s JOIN echo_chunks c ON c.id = s.chunk_id
  WHERE s.memory_id = m.id), m.created_at);
UPDATE memories m SET valid_to = coalesce((
  SELECT max(a.at) FROM audit a WHERE a.memory_id = m.id AND a.action = 'supersede'),
  m.updated_at) WHERE m.superseded_by IS NOT NULL;
"""
