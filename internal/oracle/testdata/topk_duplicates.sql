-- TopK, DISTINCT ON and windows over tables with duplicate rows (no
-- primary key). Copies of one row are indistinguishable, so the results
-- below are determined even where copies tie: the sort keys order the
-- distinct rows apart (v is a function of k here), or the views show only
-- sort key columns.

CREATE TABLE d (k int, v text);

CREATE MATERIALIZED VIEW top3 AS SELECT k, v FROM d ORDER BY k DESC NULLS LAST, v LIMIT 3;
CREATE MATERIALIZED VIEW mid AS SELECT k FROM d ORDER BY k LIMIT 2 OFFSET 2;
CREATE MATERIALIZED VIEW rest AS SELECT k, v FROM d ORDER BY k, v OFFSET 3;
CREATE MATERIALIZED VIEW numbered AS SELECT k, v, row_number() OVER (ORDER BY k, v) AS rn FROM d;
CREATE MATERIALIZED VIEW top2_each AS
  SELECT * FROM (SELECT k, v, row_number() OVER (PARTITION BY v ORDER BY k) AS rn FROM d) t WHERE rn <= 2;
CREATE MATERIALIZED VIEW one_each AS SELECT DISTINCT ON (v) v, k FROM d ORDER BY v, k DESC;
CREATE MATERIALIZED VIEW frames AS
  SELECT k, sum(k) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2,
         count(*) OVER (ORDER BY k RANGE CURRENT ROW) AS peers,
         lag(k, 2, -1) OVER (ORDER BY k) AS lag2, lead(k, -1) OVER (ORDER BY k) AS back1,
         nth_value(k, 3) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS third,
         sum(k) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) AS ex_ties,
         count(*) OVER (ORDER BY k GROUPS BETWEEN 1 PRECEDING AND 1 PRECEDING) AS prev_group
  FROM d;
CREATE MATERIALIZED VIEW setops AS
  SELECT k FROM d INTERSECT ALL SELECT k FROM d WHERE k > 1
  EXCEPT ALL SELECT k FROM d WHERE k = 3;

INSERT INTO d VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, 'c'), (3, 'c'), (3, 'c');
-- More copies of the boundary row.
INSERT INTO d VALUES (3, 'c');
-- Deleting every copy of a row at the top.
DELETE FROM d WHERE k = 3;
-- NULLs.
INSERT INTO d VALUES (NULL, NULL), (NULL, NULL), (0, 'z');
-- A delta that cancels within one transaction.
BEGIN;
INSERT INTO d VALUES (9, 'i'), (9, 'i');
DELETE FROM d WHERE k = 9;
COMMIT;
-- Updates that change several copies at once.
UPDATE d SET k = 5, v = 'e' WHERE k = 2;
UPDATE d SET v = 'b' WHERE k IS NULL;
DELETE FROM d WHERE k = 5;
DELETE FROM d;
