-- ouro index, schema 5: entities are derived once. entities.json (kept by the
-- diary writers from facts.jsonl, checked by its stamp) is the one derivation of
-- entity -> {count, factIds, lastSeenAt}; the index's own copy of it, the
-- entities table, is dropped. fact_entities stays: it is each fact's about
-- labels, the join a search by entity filters on, not a derivation of entities.

DROP TABLE entities;
