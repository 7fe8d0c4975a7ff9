-- Aggregates without GROUP BY return exactly one row, even over no rows:
-- COUNT is 0, every other aggregate NULL. The row is there from the
-- moment the view is created, and stays when the table empties again.
-- HAVING without GROUP BY, in contrast, can remove that row.

CREATE TABLE e (a int, b numeric(6,2), c text, d boolean, s smallint, g bigint);

CREATE MATERIALIZED VIEW totals AS
SELECT count(*) AS n, count(a) AS n_a, count(DISTINCT a) AS distinct_a,
       sum(a) AS sum_a, sum(b) AS sum_b, sum(s) AS sum_s, sum(g) AS sum_g,
       avg(a) AS avg_a, avg(b) AS avg_b,
       min(a) AS min_a, max(a) AS max_a, min(c) AS min_c, max(c) AS max_c,
       bool_and(d) AS all_d, bool_or(d) AS any_d,
       count(*) FILTER (WHERE d) AS n_d, sum(a) FILTER (WHERE a > 1) AS big_a
FROM e;

CREATE MATERIALIZED VIEW expressions AS
SELECT COALESCE(sum(a), 0) AS sum_or_zero, count(*) * 2 AS twice, sum(a) + 1 AS sum_plus_1,
       CASE WHEN count(*) = 0 THEN 'empty' ELSE 'rows' END AS state
FROM e;

CREATE MATERIALIZED VIEW filtered_total AS SELECT count(*) AS n, max(b) AS max_b FROM e WHERE a > 100;
CREATE MATERIALIZED VIEW nonempty_only AS SELECT count(*) AS n FROM e HAVING count(*) > 0;
CREATE MATERIALIZED VIEW nested_total AS SELECT count(*) AS n, sum(n_a) AS s FROM (SELECT count(a) AS n_a FROM e) t;

SELECT count(*), sum(a), max(c) FROM e;

INSERT INTO e VALUES (1, 1.50, 'x', true, 1, 9223372036854775807);
INSERT INTO e VALUES (2, 2.25, 'y', false, 2, 9223372036854775807), (2, NULL, NULL, NULL, NULL, NULL);
INSERT INTO e VALUES (200, 0.01, 'a', true, 3, 3);
UPDATE e SET a = a * 100 WHERE a = 2;
DELETE FROM e WHERE a > 100;

-- Only NULLs: rows are counted, values are not.
DELETE FROM e;
INSERT INTO e VALUES (NULL, NULL, NULL, NULL, NULL, NULL), (NULL, NULL, NULL, NULL, NULL, NULL);
DELETE FROM e;

-- A join of empty tables, aggregated.
CREATE TABLE f (a int, z text);
CREATE MATERIALIZED VIEW join_total AS SELECT count(*) AS n, sum(e.a) AS s, max(f.z) AS z FROM e JOIN f ON e.a = f.a;
INSERT INTO f VALUES (1, 'one');
INSERT INTO e (a) VALUES (1), (1);
DELETE FROM f;
SELECT * FROM join_total;

-- Created over a table that already has rows, then emptied.
INSERT INTO e (a, c) VALUES (5, 'five');
CREATE MATERIALIZED VIEW late_totals AS SELECT count(*) AS n, sum(a) AS s, min(c) AS c FROM e;
DELETE FROM e;
