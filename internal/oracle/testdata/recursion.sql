-- WITH RECURSIVE in materialized views, compared with PostgreSQL after
-- every statement: reachability and transitive closure over a graph with
-- cycles, path counting, hierarchy rollups; inserts, deletes, updates,
-- NULLs and transactions.

CREATE TABLE edges (src int, dst int);

CREATE MATERIALIZED VIEW reach AS
  WITH RECURSIVE r(node) AS (
    SELECT 1
    UNION
    SELECT e.dst FROM r JOIN edges e ON e.src = r.node)
  SELECT node FROM r;

CREATE MATERIALIZED VIEW closure AS
  WITH RECURSIVE t(a, b) AS (
    SELECT src, dst FROM edges
    UNION
    SELECT t.a, e.dst FROM t JOIN edges e ON t.b = e.src)
  SELECT a, b FROM t;

-- Paths from node 1 of at most four edges, counted (UNION ALL keeps every
-- path): finite even over cycles thanks to the depth bound.
CREATE MATERIALIZED VIEW paths AS
  WITH RECURSIVE p(node, depth) AS (
    SELECT dst, 1 FROM edges WHERE src = 1
    UNION ALL
    SELECT e.dst, p.depth + 1 FROM p JOIN edges e ON e.src = p.node WHERE p.depth < 4)
  SELECT node, depth, count(*) AS n FROM p GROUP BY node, depth;

CREATE MATERIALIZED VIEW reach_count AS
  WITH RECURSIVE r(node) AS (SELECT 1 UNION SELECT e.dst FROM r JOIN edges e ON e.src = r.node)
  SELECT count(*) AS n, max(node) AS top FROM r;

INSERT INTO edges VALUES (1, 2), (2, 3), (3, 4);
INSERT INTO edges VALUES (4, 2);
INSERT INTO edges VALUES (2, 2), (5, 6), (6, 5);

-- Deleting an edge on a cycle.
DELETE FROM edges WHERE src = 4 AND dst = 2;
-- An edge whose endpoints stay reachable another way.
INSERT INTO edges VALUES (1, 3);
DELETE FROM edges WHERE src = 2 AND dst = 3;
-- Cutting the graph from the start: everything but 1 goes.
DELETE FROM edges WHERE src = 1;
INSERT INTO edges VALUES (1, 5);
UPDATE edges SET dst = 2 WHERE src = 1 AND dst = 5;
UPDATE edges SET src = 3 WHERE src = 2 AND dst = 2;

-- Duplicate edges: a set for UNION, more paths for UNION ALL.
INSERT INTO edges VALUES (1, 2), (1, 2), (2, 3);
DELETE FROM edges WHERE src = 1 AND dst = 2;

-- NULL endpoints never match an edge.
INSERT INTO edges VALUES (NULL, 1), (1, NULL), (NULL, NULL), (1, 4);

-- Transactions: a block's changes reach the views at COMMIT; a rolled
-- back block changes nothing.
BEGIN;
INSERT INTO edges VALUES (4, 7), (7, 8);
DELETE FROM edges WHERE dst IS NULL;
SELECT node FROM reach;
COMMIT;

BEGIN;
DELETE FROM edges;
SELECT count(*) FROM closure;
ROLLBACK;

BEGIN;
INSERT INTO edges VALUES (8, 1);
DELETE FROM edges WHERE src = 8;
INSERT INTO edges VALUES (8, 9);
COMMIT;

-- An endless UNION ALL (a cycle without a depth bound) fails the
-- statement with 54000 on RockStream; PostgreSQL would loop forever.
--! rockstream-error 54000
CREATE MATERIALIZED VIEW endless AS
  WITH RECURSIVE p(node) AS (SELECT 2 UNION ALL SELECT e.dst FROM p JOIN edges e ON e.src = p.node)
  SELECT node FROM p;

-- A view created over an acyclic graph fails the statement that closes a
-- cycle, and the table is left as it was.
CREATE TABLE tree (id int, parent int);
CREATE MATERIALIZED VIEW depths AS
  WITH RECURSIVE d(id, depth) AS (
    SELECT id, 0 FROM tree WHERE parent IS NULL
    UNION ALL
    SELECT t.id, d.depth + 1 FROM d JOIN tree t ON t.parent = d.id)
  SELECT id, depth FROM d;
INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 1), (4, 3), (5, 4);
--! rockstream-error 54000
INSERT INTO tree VALUES (1, 5);
SELECT * FROM tree;
UPDATE tree SET parent = 2 WHERE id = 4;
DELETE FROM tree WHERE id = 3;
INSERT INTO tree VALUES (3, 2), (6, NULL), (7, 6);

-- A hierarchy rollup: headcount and payroll under every manager, at every
-- depth; and each employee's chain of managers.
CREATE TABLE emp (id int PRIMARY KEY, boss int, salary numeric(10,2));
CREATE MATERIALIZED VIEW rollup AS
  WITH RECURSIVE c(id, boss) AS (
    SELECT id, boss FROM emp WHERE boss IS NOT NULL
    UNION ALL
    SELECT c.id, e.boss FROM c JOIN emp e ON e.id = c.boss WHERE e.boss IS NOT NULL)
  SELECT c.boss AS manager, count(*) AS reports, sum(e.salary) AS payroll, avg(e.salary) AS mean
  FROM c JOIN emp e ON e.id = c.id GROUP BY c.boss;
CREATE MATERIALIZED VIEW chain AS
  WITH RECURSIVE c(id, boss, depth) AS (
    SELECT id, boss, 1 FROM emp WHERE boss IS NOT NULL
    UNION ALL
    SELECT c.id, e.boss, c.depth + 1 FROM c JOIN emp e ON e.id = c.boss WHERE e.boss IS NOT NULL)
  SELECT * FROM c;
INSERT INTO emp VALUES (1, NULL, 300), (2, 1, 200), (3, 1, 150.5), (4, 2, 100), (5, 4, 50), (6, 4, NULL);
UPDATE emp SET boss = 3 WHERE id = 4;
UPDATE emp SET salary = salary * 2 WHERE boss = 4;
DELETE FROM emp WHERE id = 4;
INSERT INTO emp VALUES (4, 3, 120) ON CONFLICT (id) DO UPDATE SET boss = EXCLUDED.boss;
BEGIN;
UPDATE emp SET boss = 2 WHERE id = 3;
INSERT INTO emp VALUES (7, 6, 10);
COMMIT;

-- Mixed: a recursive query over a view of the table, a non-recursive WITH
-- query in the recursive term, and text columns.
CREATE VIEW links AS SELECT src AS a, dst AS b FROM edges WHERE src <> dst;
CREATE MATERIALIZED VIEW labels AS
  WITH RECURSIVE w(node, route) AS (
    SELECT 1, '1'
    UNION
    SELECT l.b, w.route || '>' || l.b FROM w JOIN links l ON l.a = w.node WHERE length(w.route) < 12)
  SELECT node, route FROM w;
INSERT INTO edges VALUES (9, 10), (2, 4);
DELETE FROM edges WHERE src = 4;

DROP MATERIALIZED VIEW labels;
DROP VIEW links;

-- Subqueries and outer joins in the recursive term. EXISTS over the
-- working table's rows is a semi-join on its path; NOT EXISTS over an
-- edge's end is an anti-join on the edges read (a side input whose rows a
-- change to blocked moves both ways); NOT EXISTS over the working table's
-- rows and a LEFT JOIN from them are allowed in UNION ALL recursions.
CREATE TABLE blocked (node int);
CREATE MATERIALIZED VIEW reach_via AS
  WITH RECURSIVE r(node) AS (
    SELECT 1
    UNION
    SELECT e.dst FROM r JOIN edges e ON e.src = r.node
    WHERE EXISTS (SELECT 1 FROM blocked b WHERE b.node = r.node))
  SELECT node FROM r;
CREATE MATERIALIZED VIEW reach_open AS
  WITH RECURSIVE r(node) AS (
    SELECT 1
    UNION
    SELECT e.dst FROM r JOIN edges e ON e.src = r.node
    WHERE NOT EXISTS (SELECT 1 FROM blocked b WHERE b.node = e.dst))
  SELECT node FROM r;
CREATE MATERIALIZED VIEW avoid AS
  WITH RECURSIVE p(node, depth) AS (
    SELECT 1, 0
    UNION ALL
    SELECT e.dst, p.depth + 1 FROM p JOIN edges e ON e.src = p.node
    WHERE p.depth < 3 AND NOT EXISTS (SELECT 1 FROM blocked b WHERE b.node = p.node))
  SELECT node, depth, count(*) AS n FROM p GROUP BY node, depth;
CREATE MATERIALIZED VIEW fanout AS
  WITH RECURSIVE w(node, next, depth) AS (
    SELECT src, dst, 1 FROM edges WHERE src = 1
    UNION ALL
    SELECT w.next, e.dst, w.depth + 1 FROM w LEFT JOIN edges e ON e.src = w.next
    WHERE w.next IS NOT NULL AND w.depth < 4)
  SELECT * FROM w;
INSERT INTO blocked VALUES (1), (4), (9);
INSERT INTO edges VALUES (1, 10), (10, 4), (4, 11);
DELETE FROM blocked WHERE node = 4;
INSERT INTO blocked VALUES (10), (4);
DELETE FROM edges WHERE src = 10;
UPDATE blocked SET node = 7 WHERE node = 10;
UPDATE blocked SET node = 2 WHERE node = 1;

-- PostgreSQL accepts these; RockStream cannot maintain them as a fixpoint.
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_not_exists_union AS
  WITH RECURSIVE r(node) AS (SELECT 1 UNION SELECT e.dst FROM r JOIN edges e ON e.src = r.node WHERE NOT EXISTS (SELECT 1 FROM blocked b WHERE b.node = r.node))
  SELECT node FROM r;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_distinct_all AS
  WITH RECURSIVE r(node) AS (SELECT 1 UNION ALL SELECT DISTINCT e.dst FROM r JOIN edges e ON e.src = r.node WHERE e.dst < 5)
  SELECT node FROM r;
