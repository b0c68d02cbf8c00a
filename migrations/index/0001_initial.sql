-- ouro index, schema 1. Everything here is derived from files under desk/
-- and can be thrown away: `ouro index rebuild` recreates it.

-- key/value facts about the index itself: lastSync, stale, staleReason
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- one row per indexed file: what we saw the last time we read it
CREATE TABLE files (
  locator       TEXT PRIMARY KEY,        -- desk/... (bundle-relative)
  kind          TEXT NOT NULL,           -- task|track|iteration|friction|tip|note|daily|facts|entities
  mtime_ns      INTEGER NOT NULL,
  size          INTEGER NOT NULL,
  racy          INTEGER NOT NULL DEFAULT 0,  -- 1: modified too close to when we read it; re-hash
  hash          TEXT NOT NULL,           -- sha256 of the indexed bytes
  indexed_bytes INTEGER NOT NULL,        -- bytes covered by hash (JSONL: up to the last newline)
  lines         INTEGER NOT NULL DEFAULT 0  -- JSONL: lines in the indexed prefix
) WITHOUT ROWID;

-- every folder under desk/ with its mtime: the cheap "did anything change" check
CREATE TABLE dirs (
  path     TEXT PRIMARY KEY,
  mtime_ns INTEGER NOT NULL        -- -1: modified too close to the scan; look again
) WITHOUT ROWID;

-- malformed files and lines, reported by locator and line, skipped by search
CREATE TABLE problems (
  file   TEXT NOT NULL,
  line   INTEGER NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX problems_file ON problems(file);

-- one row per searchable item; docs.id is the rowid of docs_fts
CREATE TABLE docs (
  id      INTEGER PRIMARY KEY,
  locator TEXT NOT NULL UNIQUE,
  file    TEXT NOT NULL,
  kind    TEXT NOT NULL,          -- task|track|iteration|friction|tip|note|daily|fact
  title   TEXT NOT NULL,
  updated TEXT,
  track   TEXT
);
CREATE INDEX docs_file ON docs(file);
CREATE INDEX docs_kind_updated ON docs(kind, updated);

-- full text: title, body and keys (fact entities, note/tip tags, task track)
CREATE VIRTUAL TABLE docs_fts USING fts5(
  title, body, keys,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE tracks (
  doc_id  INTEGER PRIMARY KEY,
  name    TEXT NOT NULL,
  created TEXT
);

CREATE TABLE tasks (
  doc_id      INTEGER PRIMARY KEY,
  id          TEXT,
  track       TEXT NOT NULL,
  slug        TEXT NOT NULL,
  status      TEXT,
  priority    INTEGER,
  created     TEXT,
  updated     TEXT,
  claimed_by  TEXT,
  lease_until TEXT
);
CREATE INDEX tasks_status ON tasks(status);

CREATE TABLE iterations (
  doc_id  INTEGER PRIMARY KEY,
  task    TEXT,
  n       INTEGER,
  created TEXT,
  agent   TEXT
);

CREATE TABLE friction (
  doc_id   INTEGER PRIMARY KEY,
  id       TEXT,
  severity TEXT,
  track    TEXT,
  task     TEXT,
  created  TEXT
);

CREATE TABLE tips (
  doc_id  INTEGER PRIMARY KEY,
  slug    TEXT NOT NULL,
  created TEXT,
  updated TEXT
);

CREATE TABLE notes (
  doc_id  INTEGER PRIMARY KEY,
  slug    TEXT NOT NULL,
  created TEXT,
  updated TEXT
);

CREATE TABLE note_tags (
  note_doc INTEGER NOT NULL,
  tag      TEXT NOT NULL,
  PRIMARY KEY (tag, note_doc)
) WITHOUT ROWID;
CREATE INDEX note_tags_doc ON note_tags(note_doc);

CREATE TABLE daily (
  doc_id  INTEGER PRIMARY KEY,
  date    TEXT NOT NULL,
  entries INTEGER NOT NULL
);

CREATE TABLE facts (
  doc_id      INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  line        INTEGER NOT NULL,
  text        TEXT NOT NULL,
  source      TEXT,
  created_at  TEXT,
  tool        TEXT,
  channel     TEXT,
  friend_id   TEXT,
  friend_name TEXT,
  trust       TEXT,
  hash        TEXT,
  supersedes  TEXT,
  superseded  INTEGER NOT NULL DEFAULT 0   -- 1 when a later line supersedes this fact
);
CREATE INDEX facts_supersedes ON facts(supersedes) WHERE supersedes IS NOT NULL;
-- search hides superseded facts: keep that set small and indexed
CREATE INDEX facts_superseded ON facts(doc_id) WHERE superseded = 1;

CREATE TABLE fact_entities (
  entity   TEXT NOT NULL,
  fact_doc INTEGER NOT NULL,
  PRIMARY KEY (entity, fact_doc)
) WITHOUT ROWID;
CREATE INDEX fact_entities_doc ON fact_entities(fact_doc);

-- desk/_record/diary/entities.json as it was last read
CREATE TABLE entities (
  name         TEXT PRIMARY KEY,
  count        INTEGER,
  last_seen_at TEXT
) WITHOUT ROWID;
