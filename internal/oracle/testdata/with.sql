-- WITH queries (not recursive) in materialized views: expanded inline at
-- every reference, so a query read twice is maintained twice.

CREATE TABLE emp (id int PRIMARY KEY, boss int, dept text, salary numeric(10,2));

-- A WITH query reading an earlier one, read twice in a self-join.
CREATE MATERIALIZED VIEW pairs AS
  WITH staff AS (SELECT id, boss, dept, salary FROM emp WHERE salary IS NOT NULL),
       pay AS (SELECT id, boss, salary FROM staff WHERE dept <> 'board')
  SELECT e.id, m.id AS boss_id, e.salary - m.salary AS gap
  FROM pay e JOIN pay m ON e.boss = m.id;

-- An aggregate WITH query joined with itself.
CREATE MATERIALIZED VIEW dept_gaps AS
  WITH per_dept AS (SELECT dept, count(*) AS n, sum(salary) AS total FROM emp GROUP BY dept)
  SELECT a.dept, b.dept AS other, a.total - b.total AS diff
  FROM per_dept a JOIN per_dept b ON a.n = b.n AND a.dept < b.dept;

-- A WITH query shadowing the table it reads, a nested WITH, column
-- aliases, and a UNION of two references.
CREATE MATERIALIZED VIEW shadow AS
  WITH emp AS (SELECT id, dept FROM emp WHERE boss IS NULL) SELECT * FROM emp;
CREATE MATERIALIZED VIEW nested (dept, people) AS
  WITH outer_q AS (WITH inner_q AS (SELECT dept, id FROM emp) SELECT dept, count(*) AS c FROM inner_q GROUP BY dept)
  SELECT * FROM outer_q;
CREATE MATERIALIZED VIEW ids AS
  WITH c (x) AS (SELECT id, dept FROM emp)
  SELECT x FROM c WHERE dept = 'eng' UNION SELECT x + 100 FROM c WHERE dept IS NULL;

INSERT INTO emp VALUES (1, NULL, 'board', 500), (2, 1, 'eng', 300), (3, 2, 'eng', 200), (4, 2, 'eng', NULL), (5, 3, NULL, 150);
UPDATE emp SET salary = 250 WHERE id = 4;
UPDATE emp SET boss = 4 WHERE id = 5;
DELETE FROM emp WHERE id = 2;
INSERT INTO emp VALUES (2, NULL, 'ops', 310), (6, 2, 'ops', 300);
BEGIN;
UPDATE emp SET dept = 'eng' WHERE dept IS NULL;
DELETE FROM emp WHERE salary > 400;
COMMIT;

-- WITH in ad-hoc queries.
WITH a AS (SELECT id FROM emp), b AS (SELECT id * 2 AS d FROM a) SELECT d FROM b ORDER BY d;
-- Without RECURSIVE a WITH query cannot read a later one.
--! error 42P01
WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a;
WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a;
