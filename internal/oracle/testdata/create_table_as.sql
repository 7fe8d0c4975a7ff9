-- CREATE TABLE ... AS and SELECT ... INTO: a table with the query's
-- columns (names, types and modifiers), filled with its rows (the command
-- tag SELECT n), then an ordinary table that views read and changes
-- reach; WITH NO DATA, a column name list, IF NOT EXISTS.

CREATE TABLE src (id int PRIMARY KEY, g text, x numeric(8, 2), v varchar(4));
INSERT INTO src VALUES (1, 'a', 1.5, 'p'), (2, 'a', NULL, 'q'), (3, 'b', 3.25, NULL), (4, NULL, 0, 'rr');

CREATE TABLE copy AS SELECT * FROM src;
CREATE TABLE sums (grp, total) AS SELECT g, sum(x), count(*) AS n FROM src GROUP BY g;
CREATE TABLE shaped AS SELECT id * 2 AS id2, x::int AS xi, v || '!' AS bang, 'lit' AS l, NULL::date AS d FROM src WHERE id > 1;
CREATE TABLE empty AS SELECT * FROM src WITH NO DATA;
CREATE TABLE IF NOT EXISTS copy AS SELECT 1 AS one;
SELECT id, g INTO picked FROM src WHERE g = 'a';
CREATE TABLE dup AS SELECT id, g FROM src UNION ALL SELECT id, g FROM src;

SELECT * FROM copy;
SELECT * FROM sums;
SELECT * FROM shaped;
SELECT count(*) FROM empty;
SELECT * FROM picked;
SELECT * FROM dup;
-- The columns' types and their modifiers.
SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
  WHERE attrelid = 'copy'::regclass AND attnum > 0 ORDER BY attnum;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
  WHERE attrelid = 'shaped'::regclass AND attnum > 0 ORDER BY attnum;

-- The new tables are ordinary tables: no key, any change, views over them.
CREATE MATERIALIZED VIEW over_copy AS SELECT g, count(*) AS n, sum(x) AS s FROM copy GROUP BY g;
CREATE MATERIALIZED VIEW over_sums AS SELECT grp, total, n FROM sums WHERE total IS NOT NULL;
INSERT INTO copy VALUES (1, 'a', 1.5, 'p');
INSERT INTO empty SELECT * FROM src;
UPDATE sums SET total = total + 1;
DELETE FROM copy WHERE g IS NULL;
INSERT INTO sums VALUES ('z', 9.99, 1);

-- A table made from a materialized view.
CREATE TABLE frozen AS SELECT * FROM over_copy;
UPDATE copy SET g = 'c';
SELECT * FROM frozen;
SELECT * FROM over_copy;

--! error 42P07
CREATE TABLE copy AS SELECT 1;
--! error 42P07
SELECT 1 INTO copy;
--! error 42701
CREATE TABLE twice AS SELECT 1 AS a, 2 AS a;
--! error 42601
CREATE TABLE toomany (a, b, c) AS SELECT 1, 2;
--! error 42703
CREATE TABLE bad AS SELECT nope FROM src;
--! error 42P01
SELECT * FROM bad;

-- Neither runs in a read-only transaction.
BEGIN READ ONLY;
--! error 25006
CREATE TABLE ro AS SELECT 1 AS one;
ROLLBACK;
BEGIN READ ONLY;
--! error 25006
SELECT 1 AS one INTO ro;
ROLLBACK;
-- In a transaction block, the table and its rows commit or roll back with
-- the block.
BEGIN;
CREATE TABLE in_block AS SELECT id FROM src;
INSERT INTO in_block VALUES (100);
SELECT count(*) FROM in_block;
ROLLBACK;
--! error 42P01
SELECT * FROM in_block;
BEGIN;
CREATE TABLE in_block AS SELECT id FROM src;
INSERT INTO in_block VALUES (100);
COMMIT;
CREATE MATERIALIZED VIEW block_view AS SELECT count(*) AS n FROM in_block;
BEGIN;
INSERT INTO in_block SELECT * FROM in_block;
CREATE TABLE in_block2 AS SELECT id + 1000 AS id FROM in_block;
CREATE MATERIALIZED VIEW block_view2 AS SELECT count(*) AS n, max(id) AS top FROM in_block2;
INSERT INTO in_block SELECT * FROM in_block2;
INSERT INTO in_block2 VALUES (5000);
COMMIT;
SELECT * FROM in_block;
