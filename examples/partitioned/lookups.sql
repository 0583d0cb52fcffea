-- Point lookup of one event by id (the rows of schema_range.sql / schema_hash.sql).
\set id random(1, 100000)
SELECT id, created, account, amount FROM events WHERE id = :id;
