-- GROUPING SETS, ROLLUP, CUBE and GROUPING(): one input grouped several
-- ways at once, the keys a set does not group by NULL, GROUPING() telling
-- those NULLs from NULL keys. Maintained views under inserts, updates and
-- deletes, with NULL keys, duplicate rows, groups that empty, min/max under
-- deletes, DISTINCT and FILTER; ad-hoc queries with the rules PostgreSQL
-- checks.

CREATE TABLE s (id int PRIMARY KEY, region text, city text, kind int, amount int, price numeric);

CREATE MATERIALIZED VIEW by_rollup AS
  SELECT region, city, count(*) AS n, sum(amount) AS total, min(amount) AS lo, max(amount) AS hi,
         grouping(region, city) AS g
  FROM s GROUP BY ROLLUP (region, city);

CREATE MATERIALIZED VIEW by_cube AS
  SELECT region, kind, count(*) AS n, count(DISTINCT city) AS cities,
         sum(price) FILTER (WHERE amount > 10) AS big, grouping(kind) AS gk, grouping(kind, region) AS gkr
  FROM s GROUP BY CUBE (region, kind);

CREATE MATERIALIZED VIEW by_sets AS
  SELECT region, city, kind, avg(amount) AS a, string_agg(city, ',' ORDER BY city) AS cs
  FROM s GROUP BY GROUPING SETS ((region, city), (kind), (), (kind));

-- A plain key crossed with a rollup, and HAVING over the sets.
CREATE MATERIALIZED VIEW crossed AS
  SELECT region, city, kind, count(*) AS n, grouping(city, kind) AS g
  FROM s GROUP BY region, ROLLUP (city, kind)
  HAVING count(*) > 1 OR grouping(city) = 1;

-- HAVING on a key: the rows whose key the set does not group by are NULL
-- there.
CREATE MATERIALIZED VIEW having_key AS
  SELECT region, kind, sum(amount) AS total
  FROM s GROUP BY ROLLUP (region), CUBE (kind)
  HAVING region IS NULL OR region <> 'north';

-- Expressions over keys, a key through an alias and a position, and a
-- row-valued ROLLUP element.
CREATE MATERIALIZED VIEW exprs AS
  SELECT upper(region) AS r, kind % 2 AS parity, coalesce(city, '(all)') AS c, count(*) AS n,
         grouping(kind % 2) AS gp
  FROM s GROUP BY ROLLUP ((upper(region), city), kind % 2);

CREATE MATERIALIZED VIEW distinct_sets AS
  SELECT region, count(*) AS n FROM s GROUP BY DISTINCT GROUPING SETS ((region), (region), ());

-- The empty grouping set yields its row over an empty input too.
CREATE MATERIALIZED VIEW totals AS
  SELECT kind, count(*) AS n, sum(amount) AS total FROM s GROUP BY GROUPING SETS ((), (kind), ());

INSERT INTO s VALUES
  (1, 'north', 'oslo', 1, 10, 1.5),
  (2, 'north', 'bergen', 2, 20, 2.25),
  (3, 'south', 'rome', 1, 30, NULL),
  (4, 'south', NULL, NULL, NULL, 4),
  (5, NULL, 'nowhere', 2, 5, 0.5),
  (6, 'north', 'oslo', 1, 10, 1.5);

-- Duplicates and NULL keys in every position.
INSERT INTO s VALUES (7, 'north', 'oslo', 1, 10, 1.5), (8, NULL, NULL, NULL, NULL, NULL), (9, 'east', 'oslo', 3, 40, 10);
UPDATE s SET amount = amount + 100 WHERE id = 2;
UPDATE s SET region = 'south' WHERE city = 'oslo';
-- Deleting the minimum and the maximum of a group.
DELETE FROM s WHERE id IN (5, 9);
UPDATE s SET kind = NULL WHERE kind = 1;
DELETE FROM s WHERE region = 'south';
DELETE FROM s;
INSERT INTO s VALUES (10, 'west', 'lima', 4, 1, 1), (11, 'west', 'lima', 4, 2, 2);

SELECT region, city, count(*), grouping(region, city) FROM s GROUP BY ROLLUP (region, city) ORDER BY 4, 1, 2;
SELECT region, count(*) FROM s GROUP BY GROUPING SETS (region, ());
SELECT kind, count(*) FROM s GROUP BY CUBE (kind) ORDER BY grouping(kind), kind;
SELECT count(*) FROM s WHERE false GROUP BY ROLLUP (region);
SELECT count(*) FROM s WHERE false GROUP BY GROUPING SETS ((), ());
SELECT region AS z, count(*) FROM s GROUP BY ROLLUP (z);
SELECT region, count(*) FROM s GROUP BY ROLLUP (1);
SELECT region, city, count(*) FROM s GROUP BY (region, city);
SELECT region, count(*) FROM s GROUP BY GROUPING SETS (region, GROUPING SETS (city, ROLLUP (kind)));
SELECT region, grouping(region) FROM s GROUP BY region;
SELECT DISTINCT count(*) FROM s GROUP BY CUBE (region, city, kind);
SELECT region, rank() OVER (ORDER BY grouping(region), region) FROM s GROUP BY ROLLUP (region);
SELECT count(*), (SELECT count(*) FROM s) FROM s GROUP BY ROLLUP (region);

--! error 42803
SELECT grouping(region) FROM s;
--! error 42803
SELECT count(*) FROM s WHERE grouping(region) = 0;
--! error 42803
SELECT grouping(city) FROM s GROUP BY ROLLUP (region);
--! error 42803
SELECT sum(grouping(region)) FROM s GROUP BY ROLLUP (region);
--! error 42803
SELECT count(*) FILTER (WHERE grouping(region) = 0) FROM s GROUP BY ROLLUP (region);
--! error 42803
SELECT city, count(*) FROM s GROUP BY ROLLUP (region);
--! error 54011
SELECT count(*) FROM s GROUP BY CUBE (id, region, city, kind, amount, price, id, region, city, kind, amount, price, id);
--! error 54001
SELECT count(*) FROM s GROUP BY CUBE (id, region, city, kind, amount, price), CUBE (id, region, city, kind, amount, price), ROLLUP (id);
--! error 54023
SELECT grouping(id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id) FROM s GROUP BY id;

-- The circuit: a union of one aggregate per grouping set.
--! rockstream-only
EXPLAIN INCREMENTAL by_rollup;
--! rockstream-only
EXPLAIN INCREMENTAL SELECT region, count(*) AS n, grouping(region) AS g FROM s GROUP BY CUBE (region);
