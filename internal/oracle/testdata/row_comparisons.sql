-- Row constructors in comparisons: (a, b) = (x, y) is the AND of the
-- fields' equalities, <> their OR, < <= > >= compare left to right (the
-- first unequal pair decides, a NULL reached makes the result NULL);
-- IS [NOT] DISTINCT FROM, [NOT] IN lists of rows, BETWEEN with rows, and
-- ROW(...) IS [NOT] NULL (all fields NULL / none NULL). In maintained
-- views under inserts, updates and deletes with NULLs and duplicates, and
-- ad hoc.

CREATE TABLE r (id int PRIMARY KEY, a int, b text, c numeric, d int);

CREATE MATERIALIZED VIEW eq AS SELECT id FROM r WHERE (a, b) = (1, 'x');
CREATE MATERIALIZED VIEW ne AS SELECT id FROM r WHERE (a, b) <> (1, 'x');
CREATE MATERIALIZED VIEW lt AS SELECT id, a, b FROM r WHERE (a, b) < (2, 'm');
CREATE MATERIALIZED VIEW ge AS SELECT id FROM r WHERE ROW(a, c, d) >= ROW(1, 1.5, 0);
CREATE MATERIALIZED VIEW cols AS SELECT id FROM r WHERE (a, d) <= (d, a);
CREATE MATERIALIZED VIEW dist AS
  SELECT id, (a, b) IS DISTINCT FROM (1, 'x') AS df, (a, d) IS NOT DISTINCT FROM (d, a) AS ndf FROM r;
CREATE MATERIALIZED VIEW inlist AS SELECT id FROM r WHERE (a, b) IN ((1, 'x'), (2, 'y'), (NULL, 'z'));
CREATE MATERIALIZED VIEW notin AS SELECT id FROM r WHERE (a, d) NOT IN ((1, 1), (2, NULL));
CREATE MATERIALIZED VIEW betw AS SELECT id FROM r WHERE (a, d) BETWEEN (1, 5) AND (3, 0);
CREATE MATERIALIZED VIEW nulls AS
  SELECT id, ROW(a, b) IS NULL AS all_null, (a, b) IS NOT NULL AS none_null FROM r;
-- A row comparison as a join condition and in HAVING.
CREATE MATERIALIZED VIEW joined AS
  SELECT x.id AS x, y.id AS y FROM r x JOIN r y ON (x.a, x.d) = (y.d, y.a) WHERE x.id < y.id;
CREATE MATERIALIZED VIEW grouped AS
  SELECT a, count(*) AS n FROM r GROUP BY a HAVING (a, count(*)) > (1, 1);
CREATE MATERIALIZED VIEW single AS SELECT id FROM r WHERE ROW(a) = ROW(2);
-- A row compared with a subquery's row: one scalar subquery per column.
CREATE TABLE lim (k int, lo int, hi text);
CREATE MATERIALIZED VIEW vs_sub AS
  SELECT id FROM r WHERE (a, b) = (SELECT lo, hi FROM lim WHERE k = 1);
CREATE MATERIALIZED VIEW vs_corr AS
  SELECT id, (a, d) < (SELECT lo, k FROM lim WHERE lim.k = r.id) AS below FROM r;
INSERT INTO lim VALUES (1, 1, 'x'), (2, 5, 'q'), (3, NULL, 'z'), (8, 1, NULL);

INSERT INTO r VALUES
  (1, 1, 'x', 1.5, 0),
  (2, 1, 'y', 2, 1),
  (3, 2, 'a', NULL, 2),
  (4, NULL, 'x', 1, 1),
  (5, 1, NULL, 3, NULL),
  (6, NULL, NULL, NULL, NULL),
  (7, 2, 'y', 0, 1),
  (8, 1, 'x', 1.5, 0);

INSERT INTO r VALUES (9, 3, 'z', 5, 0), (10, NULL, 'z', 1, 2), (11, 2, NULL, 1, 2);
UPDATE r SET a = d, d = a WHERE id IN (2, 3);
UPDATE r SET b = 'x' WHERE b IS NULL;
DELETE FROM r WHERE id IN (1, 6);
UPDATE r SET c = c + 1, a = coalesce(a, 0) + 1;
UPDATE lim SET lo = 2, hi = 'y' WHERE k = 1;
DELETE FROM lim WHERE k = 3;
DELETE FROM r WHERE a > 2;
INSERT INTO r VALUES (12, 1, 'x', 1.5, 0), (13, 1, 'x', 1.5, 0);

SELECT (1, NULL) < (2, 1), (NULL, 1) < (2, 1), (1, NULL) < (1, 2), (1, 2) <= (1, 2), (1, 2) < (1, 2);
SELECT ROW(1, NULL) IS NULL, ROW(NULL, NULL) IS NULL, ROW(1, NULL) IS NOT NULL, ROW(1, 2) IS NOT NULL;
SELECT (1, 2) IS DISTINCT FROM (1, NULL), (1, NULL) IS NOT DISTINCT FROM (1, NULL);
SELECT (1, 2) IN ((1, 2), (3, NULL)), (1, 2) NOT IN ((1, 3), (3, NULL)), (3, 4) NOT IN ((1, 3), (3, NULL));
SELECT (1, 2) BETWEEN (0, 0) AND (1, 3), (1, 2) NOT BETWEEN SYMMETRIC (1, 3) AND (0, 0);
SELECT (1, 1.5) < (1, 2), (1, 'a') = (1, 'a'), ROW('x') > ROW('w');
SELECT id FROM r WHERE (a, b, c) > (1, 'x', 2) ORDER BY id;
SELECT id FROM r WHERE (b, a) = ('x', 2) OR (b, a) = ('y', 1) ORDER BY id;

SELECT id FROM r WHERE (a, b) <> (SELECT lo, hi FROM lim WHERE k = 2) ORDER BY id;
SELECT (1, 2) = (SELECT 1, 2 WHERE false), (1, 2) < (SELECT 1, 3), (2, NULL) > (SELECT 1, 1);
--! error 21000
SELECT id FROM r WHERE (a, b) = (SELECT lo, hi FROM lim);
--! error 42601
SELECT id FROM r WHERE (a, b) = (SELECT lo FROM lim);
--! error 42601
SELECT id FROM r WHERE (a, b) = (SELECT lo, hi, k FROM lim);
--! error 42601
SELECT (1, 2) = (1, 2, 3);
--! error 42883
SELECT (1, 2) = 1;
--! error 42804
SELECT (1, 2) + (3, 4);
--! error 22P02
SELECT (1, 'a') = (1, 2);
--! error 0A000
SELECT ROW() = ROW();
--! rockstream-error 0A000
SELECT ROW(a, b) FROM r;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW nested AS SELECT id FROM r WHERE ((a, b), d) = ((1, 'x'), 0);
