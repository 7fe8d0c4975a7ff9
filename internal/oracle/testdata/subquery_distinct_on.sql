-- DISTINCT ON (and DISTINCT) inside correlated subqueries: the groups are
-- taken within the rows each outer row matches, so the correlation's
-- inner columns must survive the narrowing to the select list. EXISTS,
-- NOT EXISTS, IN, NOT IN and scalar subqueries, in ad-hoc queries and in
-- materialized views maintained under inserts, updates and deletes, with
-- NULLs and duplicates.

CREATE TABLE t1 (a int, b int, c int);
CREATE TABLE t2 (c int, d int);

INSERT INTO t1 VALUES (1, 2, 1), (1, 3, 2), (2, 2, 3), (3, -2, 4), (3, 2, 5), (4, NULL, 6), (1, 2, 7);
INSERT INTO t2 VALUES (5, 2), (6, 9), (7, 3), (8, NULL), (9, -2), (5, 2);

SELECT * FROM t2 WHERE EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d) ORDER BY c, d;
SELECT * FROM t2 WHERE NOT EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d) ORDER BY c, d;
SELECT * FROM t2 WHERE c IN (SELECT DISTINCT ON (a) a + 4 FROM t1 WHERE b = d) ORDER BY c, d;
SELECT * FROM t2 WHERE c NOT IN (SELECT DISTINCT ON (a) c + 4 FROM t1 WHERE b = d ORDER BY a, c DESC) ORDER BY c, d;
SELECT c, d, (SELECT DISTINCT ON (a) c FROM t1 WHERE b = d AND a = 1 ORDER BY a, c DESC) AS x FROM t2 ORDER BY c, d;
SELECT c, d, EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d) AS e FROM t2 ORDER BY c, d;
-- The inner side of an equality may be an expression that is not
-- one-to-one: the rows of one outer row are those with that value.
SELECT c, d, (SELECT DISTINCT ON (a) a FROM t1 WHERE abs(b) = d) AS x FROM t2 WHERE d <> 2 ORDER BY c, d;
SELECT c, d, (SELECT DISTINCT a FROM t1 WHERE abs(b) = d) AS x FROM t2 WHERE d <> 2 ORDER BY c, d;
-- Correlation by other conditions.
SELECT * FROM t2 WHERE EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b < d) ORDER BY c, d;
SELECT * FROM t2 WHERE c IN (SELECT DISTINCT ON (a) a + 4 FROM t1 WHERE b < d) ORDER BY c, d;
-- Which row DISTINCT ON keeps decides the value here, per outer row.
--! rockstream-error 0A000
SELECT * FROM t2 WHERE c IN (SELECT DISTINCT ON (a) c + 4 FROM t1 WHERE b < d ORDER BY a, c);
-- DISTINCT ON over a grouped subquery.
SELECT * FROM t2 WHERE EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d GROUP BY a, b) ORDER BY c, d;

CREATE MATERIALIZED VIEW exists_on AS
SELECT * FROM t2 WHERE EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d);
CREATE MATERIALIZED VIEW not_exists_on AS
SELECT * FROM t2 WHERE NOT EXISTS (SELECT DISTINCT ON (a) a FROM t1 WHERE b = d);
CREATE MATERIALIZED VIEW in_on AS
SELECT * FROM t2 WHERE c IN (SELECT DISTINCT ON (a) c + 4 FROM t1 WHERE b = d ORDER BY a, c);
CREATE MATERIALIZED VIEW scalar_on AS
SELECT c, d, (SELECT DISTINCT ON (a) c FROM t1 WHERE b = d AND a = 1 ORDER BY a, c DESC) AS x FROM t2;
CREATE MATERIALIZED VIEW scalar_distinct AS
SELECT c, d, (SELECT DISTINCT a FROM t1 WHERE abs(b) = d AND a = 3) AS x FROM t2;

INSERT INTO t1 VALUES (7, 9, 0), (7, 9, 1);
DELETE FROM t1 WHERE a = 1 AND c = 7;
UPDATE t1 SET b = 3 WHERE a = 2;
INSERT INTO t2 VALUES (10, 3), (NULL, 2);
UPDATE t1 SET c = 9 WHERE a = 1 AND c = 1;
DELETE FROM t2 WHERE d = 9;
DELETE FROM t1 WHERE b = 2;
