-- ouro index, schema 4: the docs_file index (docs of one file, for re-indexing
-- or removing it) leaves out the facts: all of them belong to facts.jsonl and
-- are found by kind (docs_kind_updated), so 100k equal keys need not be sorted
-- and written by every rebuild. Queries name the index's terms
-- (file = ? AND kind <> 'fact').

DROP INDEX docs_file;
CREATE INDEX docs_file ON docs(file) WHERE kind <> 'fact';
