-- UPDATE's multiple-column assignments (SET (a, b) = (x, y), = ROW(...),
-- = (SELECT x, y ...)), scalar subqueries in SET (correlated or not, no
-- row giving NULL, more than one an error), and INSERT without a column
-- list and with fewer values than columns (the rest get their defaults).
-- The views over the tables follow every change.

CREATE TABLE t (id int PRIMARY KEY, a int, b text DEFAULT 'dflt', c numeric DEFAULT 1.5);
CREATE TABLE u (k int, v int, w text);
CREATE MATERIALIZED VIEW tv AS SELECT id, a, b, c FROM t;
CREATE MATERIALIZED VIEW sums AS SELECT b, sum(a) AS s, count(*) AS n FROM t GROUP BY b;

-- Fewer values than columns: the first columns, then the defaults.
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (2, 20), (3, 30);
INSERT INTO t VALUES (4, 40, 'x');
INSERT INTO t SELECT 5, 50;
INSERT INTO t SELECT k + 10, v FROM u;
INSERT INTO u VALUES (1, 100, 'p'), (2, 200, 'q'), (2, 201, 'r'), (3, NULL, NULL), (4, 400, 's');
INSERT INTO t SELECT k + 20 FROM u WHERE v > 200;
--! error 42601
INSERT INTO t (id, a) VALUES (6);
--! error 42601
INSERT INTO t VALUES (6, 1, 'x', 1, 1);
--! error 42601
INSERT INTO t (id, a) SELECT 6;

UPDATE t SET (a, b) = (a + 1, 'one') WHERE id = 1;
UPDATE t SET (b, a) = ROW('swap', id * 2) WHERE id IN (2, 3);
UPDATE t SET (a, c) = (DEFAULT, DEFAULT) WHERE id = 4;
UPDATE t SET (a) = ROW(7) WHERE id = 5;
--! error 0A000
UPDATE t SET (a) = (7) WHERE id = 5;
UPDATE t SET (a, b) = (c::int, b || '!'), c = 9 WHERE id > 20;

-- Scalar subqueries: correlated, uncorrelated, with aggregates, none
-- matching (NULL).
UPDATE t SET a = (SELECT v FROM u WHERE u.k = t.id AND v < 201);
UPDATE t SET b = (SELECT max(w) FROM u WHERE u.k = t.id), c = c + 1 WHERE id < 5;
UPDATE t SET a = (SELECT count(*) FROM u) + a WHERE b = 'one';
UPDATE t SET c = (SELECT sum(v) FROM u WHERE u.k = t.id) WHERE id = 3 RETURNING id, c;
-- A multiple-column subquery.
UPDATE t SET (a, b) = (SELECT v, w FROM u WHERE u.k = t.id AND v IS DISTINCT FROM 201) WHERE id < 10;
UPDATE t SET (b, a) = (SELECT w, v + t.id FROM u WHERE u.k = t.id - 10) WHERE id > 10 RETURNING *;
-- WHERE with a subquery too.
UPDATE t SET a = (SELECT min(v) FROM u) WHERE id IN (SELECT k FROM u WHERE w = 'p');

--! error 21000
UPDATE t SET a = (SELECT v FROM u WHERE u.k = 2);
--! error 21000
UPDATE t SET (a, b) = (SELECT v, w FROM u) WHERE id = 1;
--! error 42601
UPDATE t SET (a, b) = (1, 'x', 2);
--! error 42601
UPDATE t SET (a, b) = (SELECT v FROM u);
--! error 42601
UPDATE t SET (a, a) = (1, 2);
--! error 42601
UPDATE t SET a = 1, a = (SELECT 2);
--! error 42804
UPDATE t SET a = (SELECT w FROM u WHERE k = 1);
--! error 42703
UPDATE t SET (a, nope) = (SELECT 1, 2);
--! error 23505
UPDATE t SET id = (SELECT 1) WHERE id = 2;
