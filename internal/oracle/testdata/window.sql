-- Window functions in materialized views.
--
-- Where PostgreSQL leaves the result open (row_number, ROWS frames, lag,
-- lead, first_value, last_value and ntile among rows equal on the ORDER BY
-- keys), the views order by a unique key (id), so the result is
-- determined. rank, dense_rank, percent_rank, cume_dist, RANGE and GROUPS
-- frames treat peers alike and are compared with ties.

CREATE TABLE m (id int PRIMARY KEY, g text, x int, y numeric(8,2));

CREATE MATERIALIZED VIEW ranks AS
  SELECT id, g, x,
         rank() OVER w AS r, dense_rank() OVER w AS dr, percent_rank() OVER w AS pr, cume_dist() OVER w AS cd,
         count(*) OVER w AS running_n, sum(x) OVER w AS running_sum, avg(y) OVER w AS running_avg,
         min(x) OVER w AS running_min, max(y) OVER w AS running_max
  FROM m WINDOW w AS (PARTITION BY g ORDER BY x);
CREATE MATERIALIZED VIEW numbered AS
  SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS rn,
         lag(x) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS prev_x,
         lead(y, 2, -1) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS next2_y,
         lag(id, 0) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS same_id,
         ntile(3) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) AS tile
  FROM m;
CREATE MATERIALIZED VIEW frames AS
  SELECT id,
         sum(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s3,
         avg(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS tail_avg,
         min(y) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS min3,
         max(x) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS max_before,
         count(x) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) AS ahead,
         first_value(x) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS fv,
         last_value(x) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS lv,
         nth_value(x, 2) OVER (ORDER BY id) AS second_x
  FROM m;
CREATE MATERIALIZED VIEW peers AS
  SELECT id, x,
         sum(y) OVER (ORDER BY x RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest,
         count(*) OVER (ORDER BY x GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS near,
         sum(x) OVER (ORDER BY x GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE CURRENT ROW) AS ex_cur,
         sum(x) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE GROUP) AS ex_group,
         count(*) OVER (ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES) AS ex_ties,
         bool_and(x > 0) OVER (ORDER BY x) AS all_pos,
         sum(x) FILTER (WHERE g = 'a') OVER (PARTITION BY g) AS a_total
  FROM m;
-- No ORDER BY: every row is a peer of every other; the whole partition.
CREATE MATERIALIZED VIEW whole AS
  SELECT id, count(*) OVER () AS n, sum(x) OVER (PARTITION BY g) AS gsum, rank() OVER (PARTITION BY g) AS r FROM m;
-- Windows over the groups of a grouped query.
CREATE MATERIALIZED VIEW grouped AS
  SELECT g, sum(x) AS total, rank() OVER (ORDER BY sum(x) DESC NULLS LAST) AS r,
         sum(sum(x)) OVER (ORDER BY g NULLS FIRST) AS running
  FROM m GROUP BY g;
-- A window in a subquery, aggregated outside.
CREATE MATERIALIZED VIEW ranked_counts AS
  SELECT r, count(*) AS n FROM (SELECT rank() OVER (PARTITION BY g ORDER BY x) AS r FROM m) t GROUP BY r;

INSERT INTO m VALUES (1, 'a', 10, 1.50), (2, 'a', 20, 2.25), (3, 'a', 20, 3.00), (4, 'b', 5, 0.10);
INSERT INTO m VALUES (5, 'b', NULL, NULL), (6, NULL, 7, 7.70), (7, 'a', -3, 4.40);
-- Only partition b changes.
INSERT INTO m VALUES (8, 'b', 5, 5.55);
-- Deleting one of two peers.
DELETE FROM m WHERE id = 3;
-- Updates that move rows between partitions and within them.
UPDATE m SET g = 'b' WHERE id = 2;
UPDATE m SET x = 30 WHERE id = 1;
UPDATE m SET y = y * 2 WHERE g = 'b';
-- NULLs in partition, order and value columns.
INSERT INTO m VALUES (9, NULL, NULL, 1.00), (10, 'c', 1, NULL);
UPDATE m SET x = NULL WHERE id = 7;

-- A delta that cancels within one transaction.
BEGIN;
INSERT INTO m VALUES (20, 'a', 100, 10.00);
UPDATE m SET x = 101 WHERE id = 20;
DELETE FROM m WHERE id = 20;
COMMIT;

-- Several partitions change in one transaction.
BEGIN;
INSERT INTO m VALUES (21, 'c', 2, 2.00), (22, 'd', 3, 3.00);
DELETE FROM m WHERE id = 4;
UPDATE m SET g = 'c' WHERE id = 8;
COMMIT;

-- Ad-hoc queries run the same operators once (rows in ORDER BY order,
-- which the unique id makes total).
SELECT id, g, rank() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST), lead(id) OVER (ORDER BY id) FROM m ORDER BY id;
SELECT g, count(*), sum(count(*)) OVER (ORDER BY g NULLS FIRST) FROM m GROUP BY g ORDER BY g NULLS FIRST;
SELECT id, x, sum(x) OVER (ORDER BY x RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING) FROM m ORDER BY id;

DELETE FROM m WHERE g = 'b';
DELETE FROM m;
INSERT INTO m VALUES (30, 'a', 1, 1.00);
