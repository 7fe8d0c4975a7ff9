-- SELECT DISTINCT, UNION ALL and UNION. A distinct row stays while any
-- copy of it remains and goes with its last copy; NULLs are equal to each
-- other for DISTINCT and UNION. UNION ALL keeps every copy from both
-- sides; branches of different numeric types widen to a common type.
-- The id columns tell copies apart for the changes; the views leave them
-- out, so the copies are duplicates there.

CREATE TABLE l (id int, a int, b text, n numeric(6,2));
CREATE TABLE r (id int, a bigint, b text, n numeric(6,2));

CREATE MATERIALIZED VIEW distinct_a AS SELECT DISTINCT a FROM l;
CREATE MATERIALIZED VIEW distinct_ab AS SELECT DISTINCT a, b FROM l;
CREATE MATERIALIZED VIEW distinct_expr AS SELECT DISTINCT a % 2 AS parity, b IS NULL AS no_b FROM l;
CREATE MATERIALIZED VIEW distinct_filtered AS SELECT DISTINCT b FROM l WHERE a > 1;
CREATE MATERIALIZED VIEW union_all AS SELECT a, b FROM l UNION ALL SELECT a, b FROM r;
CREATE MATERIALIZED VIEW union_set AS SELECT a, b FROM l UNION SELECT a, b FROM r;
CREATE MATERIALIZED VIEW union_tagged AS
SELECT a, 'left' AS side FROM l UNION ALL SELECT a, 'right' AS side FROM r;
CREATE MATERIALIZED VIEW union_three AS
SELECT b FROM l UNION SELECT b FROM r UNION SELECT 'constant' AS b FROM l WHERE a = 1;
CREATE MATERIALIZED VIEW union_mixed_types AS
SELECT a AS x FROM l UNION ALL SELECT n AS x FROM r;
CREATE MATERIALIZED VIEW union_all_self AS
SELECT a FROM l UNION ALL SELECT a FROM l WHERE b = 'x';
CREATE MATERIALIZED VIEW union_all_distinct AS
SELECT DISTINCT a FROM (SELECT a FROM l UNION ALL SELECT a FROM r) u;
CREATE MATERIALIZED VIEW count_union AS
SELECT count(*) AS n, count(DISTINCT b) AS nb FROM (SELECT a, b FROM l UNION SELECT a, b FROM r) u;
CREATE MATERIALIZED VIEW distinct_counts AS
SELECT DISTINCT count(*) AS n FROM l GROUP BY a;

INSERT INTO l VALUES (1, 1, 'x', 1.00), (2, 1, 'x', 1.00), (3, 2, 'y', 2.50), (4, NULL, NULL, NULL), (5, NULL, NULL, NULL), (6, 3, NULL, 0);
INSERT INTO r VALUES (1, 1, 'x', 1.00), (2, 4, 'z', 9.99), (3, NULL, NULL, NULL), (4, 2, 'Y', 2.5);

-- One copy of a duplicate goes: the distinct row stays.
DELETE FROM l WHERE id = 1;
DELETE FROM l WHERE id = 4;
-- The last copy goes on one side; the union still has it from the other.
DELETE FROM l WHERE id = 2;
-- And then from the other side too.
DELETE FROM r WHERE id = 1;
-- A row changes into a copy of another row, and out again.
UPDATE r SET a = 2, b = 'y' WHERE id = 4;
UPDATE l SET b = 'w' WHERE id = 3;
-- Copies arrive in one statement.
INSERT INTO l VALUES (7, 5, 'v', 5.00), (8, 5, 'v', 5.00), (9, 5, 'v', 5.00);
INSERT INTO r SELECT id + 10, a, b, n FROM l;
UPDATE l SET a = NULL WHERE a = 5;

-- A change that cancels itself inside one transaction leaves no trace.
BEGIN;
INSERT INTO l VALUES (10, 42, 'tmp', 4.20);
DELETE FROM l WHERE id = 10;
COMMIT;

SELECT DISTINCT a, b FROM l ORDER BY a, b;
SELECT a, b FROM l UNION SELECT a, b FROM r ORDER BY 1, 2;
SELECT a FROM l UNION ALL SELECT a FROM r ORDER BY 1;

DELETE FROM l;
DELETE FROM r WHERE a IS NOT NULL;
