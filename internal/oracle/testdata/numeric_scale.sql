-- Numeric values carry a display scale: 1.5, 1.50 and 1.500 are equal but
-- print differently, and PostgreSQL's results print the scale the batch
-- evaluation gives. An incrementally maintained SUM or AVG must print
-- what a fresh evaluation over the remaining rows prints, even after the
-- row that brought the largest scale is gone; a UNION ALL, a join or a
-- projection must keep each row's own scale even where it meets an equal
-- value of another scale.

CREATE TABLE m (id int, g text, x numeric);

CREATE MATERIALIZED VIEW m_groups AS SELECT g, sum(x) AS s, avg(x) AS a, count(x) AS n FROM m GROUP BY g;
CREATE MATERIALIZED VIEW m_total AS SELECT sum(x) AS s, avg(x) AS a FROM m;
CREATE MATERIALIZED VIEW m_rows AS SELECT id, x, x * 2 AS x2, x + 1 AS x1, x / 3 AS x3 FROM m;

INSERT INTO m VALUES (1, 'a', 1.5), (2, 'a', 2.25), (3, 'b', 10), (4, 'b', 0.001);

-- The row with the largest scale goes: group a's sum is 1.5, not 1.50.
DELETE FROM m WHERE id = 2;
DELETE FROM m WHERE id = 4;
UPDATE m SET x = 3 WHERE id = 1;
INSERT INTO m VALUES (5, 'a', 1.000000);
DELETE FROM m WHERE id = 5;

-- Sums that cancel out.
INSERT INTO m VALUES (6, 'c', 1.25), (7, 'c', -1.25);
DELETE FROM m WHERE id = 6;
UPDATE m SET x = 0.0 WHERE id = 7;

-- Equal values of different scales side by side.
CREATE TABLE m2 (id int, y numeric);
INSERT INTO m2 VALUES (1, 3.00), (2, 1.0), (3, 10.000);
INSERT INTO m VALUES (8, 'd', 1.00), (9, 'd', 1), (10, 'd', 1.0);
CREATE MATERIALIZED VIEW m_union AS SELECT x AS v FROM m UNION ALL SELECT y AS v FROM m2;
CREATE MATERIALIZED VIEW m_join AS SELECT m.id, m.x, m2.y FROM m JOIN m2 ON m.x = m2.y;
CREATE MATERIALIZED VIEW m_union_int AS SELECT id AS v FROM m UNION ALL SELECT y AS v FROM m2;
UPDATE m2 SET y = 1.000 WHERE id = 1;
DELETE FROM m WHERE id = 9;
INSERT INTO m2 VALUES (4, 3);
SELECT v FROM (SELECT x AS v FROM m UNION ALL SELECT y AS v FROM m2) u ORDER BY v, v::text;
