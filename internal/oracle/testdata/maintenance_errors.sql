-- Errors inside maintenance: a change that makes some materialized
-- view's query fail must fail with that error and change nothing (no
-- table, no view), so that every view keeps equal to its batch
-- evaluation. Only the state after a whole statement counts: a failing
-- intermediate state inside one statement is no error. (Transaction
-- blocks: maintenance_errors_in_transactions.sql.)

-- An expression over a group's aggregates.
CREATE TABLE ge (g int, x int);
CREATE MATERIALIZED VIEW per_group AS SELECT g, 100 / (count(*) - 2) AS q, count(*) AS n FROM ge GROUP BY g;
INSERT INTO ge VALUES (1, 1);
--! error 22012
INSERT INTO ge VALUES (1, 2);
-- Two rows at once: the group goes from 1 to 3 rows, never through 2.
INSERT INTO ge VALUES (1, 2), (1, 3);
--! error 22012
DELETE FROM ge WHERE x = 3;
DELETE FROM ge WHERE x >= 2;

-- HAVING that divides by an aggregate.
CREATE TABLE gh (g int, x int);
CREATE MATERIALIZED VIEW having_div AS SELECT g, sum(x) AS s FROM gh GROUP BY g HAVING count(*) / count(x) >= 1;
INSERT INTO gh VALUES (1, 1), (1, NULL), (2, 5);
--! error 22012
INSERT INTO gh VALUES (3, NULL);
--! error 22012
UPDATE gh SET x = NULL WHERE g = 2;
UPDATE gh SET x = 7 WHERE g = 1 AND x IS NULL;

-- A failure that needs rows of two tables: the division happens only for
-- joined pairs.
CREATE TABLE num (k int, a int);
CREATE TABLE den (k int, b int);
INSERT INTO num VALUES (1, 10), (2, 20);
INSERT INTO den VALUES (1, 2), (3, 0);
CREATE MATERIALIZED VIEW ratios AS SELECT num.k, num.a / den.b AS r FROM num JOIN den ON num.k = den.k;
-- A zero divisor with no partner is fine.
INSERT INTO den VALUES (4, 0);
--! error 22012
INSERT INTO num VALUES (3, 30);
--! error 22012
UPDATE den SET k = 2 WHERE k = 4;
DELETE FROM den WHERE k = 4;
INSERT INTO num VALUES (4, 40);

-- A failure in a view over a view.
CREATE MATERIALIZED VIEW sums AS SELECT k, sum(a) AS s FROM num GROUP BY k;
CREATE MATERIALIZED VIEW inverse_sums AS SELECT k, 1000 / s AS inv FROM sums;
--! error 22012
INSERT INTO num VALUES (1, -10);
INSERT INTO num VALUES (1, -5);
--! error 22012
UPDATE num SET a = 5 WHERE k = 1 AND a = 10;

-- Overflow in an aggregate's expression.
CREATE TABLE big (g int, v bigint);
CREATE MATERIALIZED VIEW scaled AS SELECT g, sum(v) * 2 AS twice, max(v) * 2 AS max_twice FROM big GROUP BY g;
INSERT INTO big VALUES (1, 4611686018427387903);
--! error 22003
INSERT INTO big VALUES (2, 4611686018427387904);
-- sum(bigint) is numeric and cannot overflow.
INSERT INTO big VALUES (1, 4611686018427387903);
--! error 22003
UPDATE big SET v = v + 1 WHERE g = 1;

-- The failed changes left everything as it was.
SELECT * FROM ge ORDER BY g, x;
SELECT * FROM num ORDER BY k, a;
SELECT * FROM den ORDER BY k, b;
