-- ouro index, schema 6: how many docs of each kind, kept with the docs. The
-- writer (ouro.index.apply) changes a kind's row in the same transaction as it
-- inserts or deletes that kind's docs, so the counts are exact whenever a
-- reader can see the docs; `ouro index status` reads these few rows instead of
-- counting 100k+ docs on every call.
CREATE TABLE doc_counts (
  kind TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO doc_counts(kind, n) SELECT kind, count(*) FROM docs GROUP BY kind;
