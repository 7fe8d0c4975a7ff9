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
