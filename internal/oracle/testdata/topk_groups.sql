-- Per-group top-k: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)
-- filtered by rn <= k, rn < k or rn = 1 in an outer query, and DISTINCT ON.
--
-- Which of several rows equal on the ORDER BY keys gets the smaller row
-- number is not determined in PostgreSQL (RockStream orders them by the
-- whole row), so the views that show row numbers or non-key columns order
-- by a unique key (id); the others show only the partition and sort key
-- columns, which every choice among ties shows alike.

CREATE TABLE e (id int PRIMARY KEY, dept text, salary int, name text);

CREATE MATERIALIZED VIEW top2 AS
  SELECT * FROM (SELECT dept, id, salary, name, row_number() OVER (PARTITION BY dept ORDER BY salary DESC, id) AS rn FROM e) t
  WHERE rn <= 2;
CREATE MATERIALIZED VIEW first_per_dept AS
  SELECT dept, id, name FROM (SELECT dept, id, name, salary, row_number() OVER (PARTITION BY dept ORDER BY salary NULLS FIRST, id DESC) AS rn FROM e) t
  WHERE rn = 1;
CREATE MATERIALIZED VIEW lt3 AS
  SELECT dept, salary, rn FROM (SELECT dept, salary, row_number() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST, id) AS rn FROM e) t
  WHERE rn < 3 AND salary > 10;
CREATE MATERIALIZED VIEW second_third AS
  SELECT id, rn FROM (SELECT id, row_number() OVER (ORDER BY id DESC) AS rn FROM e) t
  WHERE rn BETWEEN 2 AND 3;
-- Sort keys only: ties give the same rows.
CREATE MATERIALIZED VIEW top2_keys AS
  SELECT dept, salary FROM (SELECT dept, salary, row_number() OVER (PARTITION BY dept ORDER BY salary DESC) AS rn FROM e) t
  WHERE rn <= 2;
-- A filter on the partition column is applied before numbering.
CREATE MATERIALIZED VIEW top1_not_x AS
  SELECT dept, id FROM (SELECT dept, id, row_number() OVER (PARTITION BY dept ORDER BY id) AS rn FROM e) t
  WHERE rn = 1 AND dept <> 'x';
-- Partition by an expression, numbering over a grouped query.
CREATE MATERIALIZED VIEW top_len AS
  SELECT * FROM (SELECT id, row_number() OVER (PARTITION BY length(name) ORDER BY id) AS rn FROM e) t
  WHERE rn <= 1;
CREATE MATERIALIZED VIEW top_dept_totals AS
  SELECT * FROM (SELECT dept, sum(salary) AS total, row_number() OVER (ORDER BY sum(salary) DESC NULLS LAST, dept) AS rn FROM e GROUP BY dept) t
  WHERE rn <= 2;

-- DISTINCT ON: the first row of each group in ORDER BY order.
CREATE MATERIALIZED VIEW best AS SELECT DISTINCT ON (dept) dept, id, salary FROM e ORDER BY dept, salary DESC, id;
CREATE MATERIALIZED VIEW best_keys AS SELECT DISTINCT ON (dept) dept, salary FROM e ORDER BY dept, salary NULLS FIRST;
CREATE MATERIALIZED VIEW best_two_keys AS SELECT DISTINCT ON (dept, salary > 50) dept, salary > 50 AS high, id FROM e ORDER BY dept, salary > 50, id DESC;
CREATE MATERIALIZED VIEW best_limited AS SELECT DISTINCT ON (dept) dept, id FROM e ORDER BY dept DESC NULLS LAST, id LIMIT 2;
CREATE MATERIALIZED VIEW best_count AS SELECT count(*) AS groups FROM (SELECT DISTINCT ON (dept) dept, name FROM e) t;

INSERT INTO e VALUES (1, 'eng', 100, 'ann'), (2, 'eng', 90, 'bob'), (3, 'eng', 80, 'cy');
INSERT INTO e VALUES (4, 'ops', 50, 'dee'), (5, 'ops', 60, 'ed'), (6, NULL, 40, 'flo');
INSERT INTO e VALUES (7, 'x', 5, 'gus'), (8, 'eng', NULL, 'hal');

-- A new top row pushes the second one out and renumbers the partition.
INSERT INTO e VALUES (9, 'eng', 200, 'ivy');
-- Deleting a top row pulls the next one in.
DELETE FROM e WHERE id = 9;
DELETE FROM e WHERE id = 1;
-- Ties on salary, broken by id where rows are numbered.
INSERT INTO e VALUES (10, 'eng', 90, 'jo'), (11, 'ops', 60, 'kim');
-- Updates that move rows between partitions and within them.
UPDATE e SET dept = 'ops' WHERE id = 2;
UPDATE e SET salary = 55 WHERE id = 4;
UPDATE e SET dept = NULL WHERE id = 3;
-- NULLs in partition and sort keys.
INSERT INTO e VALUES (12, NULL, NULL, 'lu'), (13, 'ops', NULL, 'max');
UPDATE e SET salary = NULL WHERE id = 5;

-- A delta that cancels within one transaction.
BEGIN;
INSERT INTO e VALUES (20, 'eng', 1000, 'zed');
UPDATE e SET salary = 1 WHERE id = 20;
DELETE FROM e WHERE id = 20;
COMMIT;

-- A partition emptied and refilled in one transaction.
BEGIN;
DELETE FROM e WHERE dept = 'ops';
INSERT INTO e VALUES (21, 'ops', 70, 'ned'), (22, 'ops', 70, 'oz');
COMMIT;

DELETE FROM e WHERE dept = 'eng';
DELETE FROM e;
