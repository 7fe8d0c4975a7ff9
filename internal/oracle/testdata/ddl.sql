-- Creating and dropping tables and views, and the dependencies between
-- them: RESTRICT (the default) refuses to drop a relation others depend
-- on (2BP01); CASCADE drops the dependents too. A dropped name can be
-- reused, and the new relation starts empty. Wrong-kind drops fail with
-- 42809, missing relations with 42P01, duplicate names with 42P07.

CREATE TABLE base (k int, v text);
INSERT INTO base VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE MATERIALIZED VIEW mv1 AS SELECT k, v FROM base WHERE k > 1;
CREATE MATERIALIZED VIEW mv2 AS SELECT count(*) AS n FROM mv1;
CREATE VIEW iv1 AS SELECT k FROM base WHERE k < 3;
CREATE MATERIALIZED VIEW mv3 AS SELECT k FROM iv1;

--! error 42P07
CREATE TABLE base (x int);
--! error 42P07
CREATE MATERIALIZED VIEW mv1 AS SELECT 1 AS one;
--! error 42P07
CREATE VIEW mv2 AS SELECT 1 AS one;

--! error 2BP01
DROP TABLE base;
--! error 2BP01
DROP TABLE base RESTRICT;
--! error 2BP01
DROP MATERIALIZED VIEW mv1;
--! error 2BP01
DROP VIEW iv1;

--! error 42809
DROP TABLE mv2;
--! error 42809
DROP MATERIALIZED VIEW base;
--! error 42809
DROP VIEW mv2;
--! error 42809
DROP MATERIALIZED VIEW iv1;
--! error 42P01
DROP TABLE nothing_here;
--! error 42P01
DROP MATERIALIZED VIEW nothing_here;
DROP TABLE IF EXISTS nothing_here;
DROP MATERIALIZED VIEW IF EXISTS nothing_here;

-- The views still work after the failed drops.
INSERT INTO base VALUES (4, 'four');

-- Dropping a view with no dependents, then reusing its name.
DROP MATERIALIZED VIEW mv2;
--! error 42P01
SELECT * FROM mv2;
CREATE MATERIALIZED VIEW mv2 AS SELECT k * 100 AS k100 FROM mv1;
INSERT INTO base VALUES (5, 'five');

-- CASCADE drops the dependents.
DROP MATERIALIZED VIEW mv1 CASCADE;
--! error 42P01
SELECT * FROM mv2;
DELETE FROM base WHERE k = 1;
DROP VIEW iv1 CASCADE;
--! error 42P01
SELECT * FROM mv3;
UPDATE base SET v = 'changed' WHERE k > 3;

-- Several levels, dropped from the table.
CREATE MATERIALIZED VIEW a1 AS SELECT k, v FROM base;
CREATE MATERIALIZED VIEW a2 AS SELECT v FROM a1 WHERE k > 2;
CREATE VIEW a3 AS SELECT count(*) AS n FROM a2;
CREATE MATERIALIZED VIEW a4 AS SELECT n FROM a3;
CREATE TABLE other (k int);
CREATE MATERIALIZED VIEW a5 AS SELECT other.k FROM other JOIN a1 ON a1.k = other.k;
INSERT INTO other VALUES (2), (4);
DROP TABLE base CASCADE;
--! error 42P01
SELECT * FROM a5;
INSERT INTO other VALUES (5);

-- The name is free again, with another shape; nothing of the old
-- relation remains.
CREATE TABLE base (k text, extra numeric);
SELECT * FROM base;
INSERT INTO base VALUES ('x', 1.5);
CREATE MATERIALIZED VIEW a1 AS SELECT k, extra * 2 AS e2 FROM base;
CREATE MATERIALIZED VIEW a5 AS SELECT base.k, other.k AS ok FROM base CROSS JOIN other;
DROP TABLE other, base CASCADE;
