-- INSERT, UPDATE and DELETE in their usual forms, with their command
-- tags: multi-row VALUES, column lists with omitted columns (NULL or
-- DEFAULT), INSERT ... SELECT (also from the same table), UPDATE reading
-- the old row (SET a = b, b = a swaps), updates that change nothing,
-- updates and deletes matching no rows or every row.

CREATE TABLE t (id int, a int, b text DEFAULT 'dflt', c numeric(5,1));
CREATE TABLE src (x int, y text);

CREATE MATERIALIZED VIEW t_all AS SELECT id, a, b, c FROM t;
CREATE MATERIALIZED VIEW t_sum AS SELECT b, count(*) AS n, sum(a) AS sa, sum(c) AS sc FROM t GROUP BY b;
CREATE MATERIALIZED VIEW t_pos AS SELECT id, a FROM t WHERE a > 0;

INSERT INTO t VALUES (1, 10, 'x', 1.5);
INSERT INTO t VALUES (2, 20, 'y', 2.5), (3, -30, 'x', NULL), (4, NULL, NULL, 0);
INSERT INTO t (id, a) VALUES (5, 50);
INSERT INTO t (a, id) VALUES (60, 6);
INSERT INTO t (id, b) VALUES (7, DEFAULT);
INSERT INTO t DEFAULT VALUES;

INSERT INTO src VALUES (100, 'p'), (200, 'q'), (300, NULL);
INSERT INTO t (id, a, b) SELECT x / 100 + 10, x, y FROM src WHERE x > 100;
INSERT INTO t SELECT id + 100, a, b, c FROM t WHERE id < 4;
INSERT INTO t SELECT * FROM t WHERE false;

UPDATE t SET a = a + 1;
UPDATE t SET a = b::int WHERE false;
UPDATE t SET b = 'z' WHERE id = 999;
UPDATE t SET a = a WHERE id = 1;
UPDATE t SET c = c * 2, a = -a WHERE b = 'x';
UPDATE t SET id = a, a = id WHERE id = 2;
UPDATE t SET b = NULL WHERE b = 'dflt';
UPDATE t SET b = 'y', c = 9.9 WHERE b IS NULL AND id IS NOT NULL;
UPDATE t SET a = (a + 1) * 2 WHERE a BETWEEN -100 AND 100;

DELETE FROM t WHERE id = 999;
DELETE FROM t WHERE a < 0;
DELETE FROM t WHERE id IS NULL;
SELECT * FROM t ORDER BY id, a;
DELETE FROM t;
INSERT INTO t VALUES (1, 1, 'again', 1);

-- UPDATE and DELETE by the leading key column (the first primary-key
-- column, or the first column without a primary key) read only the rows
-- under those keys: duplicates, NULLs in IN lists, equal numerics written
-- differently, cross-type comparisons and further conditions must still
-- find exactly the rows PostgreSQL finds.
CREATE TABLE kp (x text, k2 int, k1 numeric(6,2), v int, PRIMARY KEY (k1, k2));
CREATE TABLE kn (k bigint, v int);
CREATE MATERIALIZED VIEW kp_all AS SELECT * FROM kp;
CREATE MATERIALIZED VIEW kn_sum AS SELECT k, count(*) AS n, sum(v) AS s FROM kn GROUP BY k;
INSERT INTO kp VALUES ('a', 1, 1, 10), ('b', 2, 1, 20), ('c', 1, 2.5, 30), ('d', 2, 3, 40), ('e', 1, -1, 50);
INSERT INTO kn VALUES (1, 1), (1, 1), (2, 2), (NULL, 3), (3, 4), (4, 5), (2, 6);
UPDATE kp SET v = v + 1 WHERE k1 = 1.0;
UPDATE kp SET v = v + 1 WHERE k1 = 1.000 AND k2 = 2;
UPDATE kp SET x = 'z' WHERE k1 IN (2.50, 3, NULL, 7);
UPDATE kp SET k1 = k1 + 10 WHERE 3 = k1;
DELETE FROM kp WHERE k1 = 1 AND v > 15;
DELETE FROM kp WHERE k2 = 1 AND k1 IN (-1);
DELETE FROM kn WHERE k = 1;
DELETE FROM kn WHERE k IN (2, NULL) AND v > 5;
UPDATE kn SET v = v * 10 WHERE k = 3::int;
UPDATE kn SET k = 5 WHERE k IN (4::smallint, 3);
DELETE FROM kn WHERE k = NULL;
DELETE FROM kn WHERE k IN (NULL);
UPDATE kn SET v = 0 WHERE k IS NULL OR k = 2;
SELECT * FROM kp ORDER BY k1, k2;
SELECT * FROM kn ORDER BY k, v;

-- When several SET expressions of a row fail, the error is that of the
-- first failing column in the table's column order, whatever the order
-- of the SET list: 22P02 for the cast of s, 22012 for the division.
CREATE TABLE se (a int, b int, c int, s text, PRIMARY KEY (b));
CREATE MATERIALIZED VIEW se_all AS SELECT * FROM se;
INSERT INTO se VALUES (1, 2, 3, 'x');
--! error 22P02
UPDATE se SET c = 1 / (c - 3), a = s::int;
--! error 22P02
UPDATE se SET a = s::int, c = 1 / (c - 3);
--! error 22012
UPDATE se SET c = s::int, a = 1 / (c - 3);
--! error 22012
UPDATE se SET a = 1 / (c - 3), c = s::int;
--! error 22012
INSERT INTO se VALUES (5, 2, 3, 'y') ON CONFLICT (b) DO UPDATE SET c = excluded.s::int, a = 1 / (se.c - 3);
--! error 22P02
INSERT INTO se VALUES (5, 2, 3, 'y') ON CONFLICT (b) DO UPDATE SET c = 1 / (se.c - 3), a = excluded.s::int;
SELECT * FROM se;
