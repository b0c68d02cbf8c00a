-- ouro index, schema 2: a fact's text is stored once, as its FTS5 body
-- (docs_fts.body, the same string); the copy in facts.text is dropped.
-- An index of schema 1 is migrated in place by this one statement (SQLite
-- rewrites the facts table); every answer stays the same, since nothing
-- read facts.text.

ALTER TABLE facts DROP COLUMN text;
