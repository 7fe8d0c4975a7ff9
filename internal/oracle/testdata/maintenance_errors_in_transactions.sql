-- Errors inside maintenance, in transaction blocks. A transaction is
-- the unit of change: its views are maintained as of COMMIT, so a state
-- in the middle of a block that would make a materialized view's query
-- fail is no error when the block repairs it before COMMIT; a final state
-- that makes it fail fails the COMMIT, and the block changes nothing.
-- (An engine may report a failure that persists to COMMIT at the
-- statement that causes it; the comparison accepts that.)

-- An expression over a group's aggregates.
CREATE TABLE ge (g int, x int);
CREATE MATERIALIZED VIEW per_group AS SELECT g, 100 / (count(*) - 2) AS q, count(*) AS n FROM ge GROUP BY g;
INSERT INTO ge VALUES (1, 1), (3, 1), (3, 2), (3, 3);

-- The group passes through 2 rows and ends with 3.
BEGIN;
INSERT INTO ge VALUES (2, 1), (2, 2), (2, 3);
DELETE FROM ge WHERE g = 2 AND x = 3;
INSERT INTO ge VALUES (2, 4);
COMMIT;

-- A group ends with 2 rows.
BEGIN;
DELETE FROM ge WHERE g = 3 AND x = 3;
INSERT INTO ge VALUES (1, 5), (1, 6);
--! error 22012
COMMIT;

-- A failing pair of a join appears and goes within the block.
CREATE TABLE num (k int, a int);
CREATE TABLE den (k int, b int);
INSERT INTO num VALUES (1, 10), (2, 20);
INSERT INTO den VALUES (1, 2), (4, 0);
CREATE MATERIALIZED VIEW ratios AS SELECT num.k, num.a / den.b AS r FROM num JOIN den ON num.k = den.k;
BEGIN;
INSERT INTO num VALUES (4, 40);
DELETE FROM den WHERE k = 4;
COMMIT;

-- A failing row inserted and deleted again.
BEGIN;
INSERT INTO den VALUES (2, 0);
UPDATE den SET b = 5 WHERE k = 2;
COMMIT;

SELECT * FROM ge ORDER BY g, x;
SELECT * FROM ratios ORDER BY k;
