-- Ordered-set aggregates maintained incrementally: percentile_cont over
-- double precision and interval, percentile_disc over any sortable type,
-- with one fraction or an array of them, and mode(); grouped and global,
-- with FILTER, NULL inputs (ignored), duplicates, ties, DESC order,
-- fractions computed from the group keys, deletes and updates that move
-- the percentile or the mode, rows moving between groups, and groups that
-- appear and disappear.

CREATE TABLE m (id int PRIMARY KEY, g text, k int, x float8, i interval, s text, n numeric, d date);

CREATE MATERIALIZED VIEW by_g AS
  SELECT g,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS median,
         percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC) AS q1_desc,
         percentile_cont(0.9) WITHIN GROUP (ORDER BY i) AS i90,
         percentile_disc(0.5) WITHIN GROUP (ORDER BY s) AS s50,
         percentile_disc(0) WITHIN GROUP (ORDER BY d) AS d0,
         percentile_disc(1) WITHIN GROUP (ORDER BY k) AS k100,
         percentile_disc(0.4) WITHIN GROUP (ORDER BY x DESC NULLS FIRST) AS x40_desc,
         mode() WITHIN GROUP (ORDER BY k) AS k_mode,
         mode() WITHIN GROUP (ORDER BY s DESC) AS s_mode_desc,
         -- Equal numerics written differently are one class (which one
         -- shows is unspecified in PostgreSQL: the cast fixes the scale).
         (mode() WITHIN GROUP (ORDER BY n))::numeric(10,2) AS n_mode,
         count(*) AS n
  FROM m GROUP BY g;

CREATE MATERIALIZED VIEW arrays AS
  SELECT g,
         percentile_cont(ARRAY[0, 0.1, 0.5, 0.75, 1]) WITHIN GROUP (ORDER BY x) AS xs,
         percentile_cont(ARRAY[0.5, NULL, 0.3]::float8[]) WITHIN GROUP (ORDER BY i) AS is_,
         percentile_disc(ARRAY[0.9, 0.1]) WITHIN GROUP (ORDER BY s) AS ss,
         percentile_disc(ARRAY[]::float8[]) WITHIN GROUP (ORDER BY k) AS none
  FROM m GROUP BY g;

CREATE MATERIALIZED VIEW whole AS
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS median,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY k) AS k_median,
         percentile_disc(0.75) WITHIN GROUP (ORDER BY n) AS n75,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FILTER (WHERE g <> 'a') AS median_not_a,
         mode() WITHIN GROUP (ORDER BY g) AS g_mode,
         mode() WITHIN GROUP (ORDER BY d DESC) AS d_mode,
         count(x) AS xs
  FROM m;

-- The fraction may use the grouped columns: it is constant per group.
CREATE MATERIALIZED VIEW by_k AS
  SELECT k, percentile_cont(k / 10.0) WITHIN GROUP (ORDER BY x) AS p,
         percentile_disc(k / 10.0) WITHIN GROUP (ORDER BY x) FILTER (WHERE id > 2) AS pd
  FROM m WHERE k BETWEEN 0 AND 10 GROUP BY k;

-- Percentiles over a join and HAVING over one.
CREATE MATERIALIZED VIEW high AS
  SELECT a.g, percentile_disc(0.5) WITHIN GROUP (ORDER BY b.k) AS kk
  FROM m a JOIN m b ON a.g = b.g
  GROUP BY a.g HAVING percentile_cont(0.5) WITHIN GROUP (ORDER BY a.x) > 1;

INSERT INTO m VALUES
  (1, 'a', 1, 1.5, '1 day', 'pear', 1.50, '2026-01-03'),
  (2, 'a', 2, 2.5, '2 days', 'apple', 2, '2026-01-01'),
  (3, 'a', 2, NULL, NULL, NULL, NULL, NULL),
  (4, 'b', 5, 10, '1 mon', 'fig', 10, '2026-02-01'),
  (5, 'b', 5, -3, '-2 hours', 'fig', 10, '2026-02-01'),
  (6, 'b', 7, 0, '36 hours', 'kiwi', -1, '2025-12-31'),
  (7, NULL, 3, 4, '1 year', 'plum', 3, '2026-03-01');

-- Duplicates and a tie for the mode: the first value in sort order wins.
INSERT INTO m VALUES (8, 'a', 9, 2.5, '2 days', 'zucchini', 2, '2026-01-01'), (9, 'a', 9, 100, '12:00', 'apple', 2.00, '2026-01-05');

-- A delete that moves the median and breaks the tie.
DELETE FROM m WHERE id = 2;
-- An update that moves rows between groups.
UPDATE m SET g = 'b' WHERE id IN (1, 9);
-- An update of the ordered value only.
UPDATE m SET x = x * -1, k = k + 1 WHERE g = 'b';
-- Infinity, -Infinity and NaN sort as PostgreSQL sorts them.
INSERT INTO m VALUES (10, 'c', 4, 'Infinity', '1 day', 'x', 'NaN', '2026-01-01'), (11, 'c', 4, '-Infinity', '2 days', 'y', 1, '2026-01-01'),
  (12, 'c', 4, 'NaN', '3 days', 'z', 'Infinity', '2026-01-01');
DELETE FROM m WHERE id = 12;
-- A group whose only row has NULL values: the results are NULL.
INSERT INTO m VALUES (13, 'd', NULL, NULL, NULL, NULL, NULL, NULL);
DELETE FROM m WHERE g = 'c';
-- A change that cancels itself within one statement.
UPDATE m SET x = x + 1 WHERE id = 4;
UPDATE m SET x = x - 1 WHERE id = 4;
-- Many rows in one group, then most of them go.
INSERT INTO m SELECT 100 + s, 'e', s % 7, s * 0.5, s * interval '1 hour', 's' || (s % 13), s % 5, date '2026-01-01' + s % 3 FROM generate_series(1, 60) s;
DELETE FROM m WHERE g = 'e' AND id % 3 <> 0;
UPDATE m SET g = 'a' WHERE g = 'e' AND id > 150;

-- Ad-hoc queries answer the same way.
SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS p, mode() WITHIN GROUP (ORDER BY k DESC) AS m FROM m GROUP BY g ORDER BY g;
SELECT percentile_cont(ARRAY[0.2, 0.8]) WITHIN GROUP (ORDER BY i DESC) FROM m;
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM m WHERE false;
SELECT percentile_cont(NULL) WITHIN GROUP (ORDER BY x) FROM m;
SELECT percentile_cont('0.5') WITHIN GROUP (ORDER BY k) FROM m;
SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY n::numeric(10,2)) FROM m GROUP BY g ORDER BY g;
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ARRAY[k, k]) FROM m;

DELETE FROM m WHERE g IS NOT NULL;
DELETE FROM m;
INSERT INTO m VALUES (20, 'z', 1, 1, '1 day', 'one', 1, '2026-01-01');

-- Errors, as PostgreSQL reports them.
--! error 22003
SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM m;
--! error 22003
SELECT percentile_disc(ARRAY[0.5, -0.1]) WITHIN GROUP (ORDER BY x) FROM m;
--! error 22003
SELECT percentile_cont('NaN') WITHIN GROUP (ORDER BY x) FROM m;
--! error 42883
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM m;
--! error 42883
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x, k) FROM m;
--! error 42883
SELECT mode(x) WITHIN GROUP (ORDER BY x) FROM m;
--! error 42883
SELECT percentile_cont(0.5) FROM m;
--! error 42883
SELECT sum(x) WITHIN GROUP (ORDER BY x) FROM m;
--! error 42804
SELECT mode() WITHIN GROUP (ORDER BY 'a') FROM m;
--! error 42803
SELECT percentile_cont(x) WITHIN GROUP (ORDER BY x) FROM m;
--! error 42803
SELECT percentile_cont(sum(x)) WITHIN GROUP (ORDER BY x) FROM m;
--! error 42704
SELECT percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY ARRAY[k]) FROM m;
--! error 42601
SELECT percentile_disc(DISTINCT 0.5) WITHIN GROUP (ORDER BY x) FROM m;
--! error 0A000
SELECT mode() WITHIN GROUP (ORDER BY x) OVER () FROM m;

-- A fraction out of range fails the change that gives its group a row,
-- even a row whose value is NULL, and changes nothing.
CREATE MATERIALIZED VIEW bad AS
  SELECT g, percentile_cont(k - 1) WITHIN GROUP (ORDER BY x) AS p FROM m GROUP BY g, k;
--! error 22003
INSERT INTO m VALUES (21, 'y', 3, NULL, NULL, NULL, NULL, NULL);
INSERT INTO m VALUES (22, 'y', 2, 5, NULL, NULL, NULL, NULL);
DROP MATERIALIZED VIEW bad;

-- A fraction that reads the query around it: a query answers it, a view
-- refuses it.
INSERT INTO m VALUES (23, 'x', 9, 30, NULL, NULL, NULL, NULL), (24, 'x', 5, 0, NULL, NULL, NULL, NULL);
SELECT id, (SELECT percentile_cont(m.k / 10.0) WITHIN GROUP (ORDER BY x) FROM m AS inner_m) FROM m;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW outer_fraction AS
  SELECT id, (SELECT percentile_cont(m.k / 10.0) WITHIN GROUP (ORDER BY x) FROM m AS inner_m) AS p FROM m;

-- Not supported: fractions PostgreSQL accepts that hold a subquery.
--! rockstream-error 0A000
SELECT percentile_cont((SELECT 0.5)) WITHIN GROUP (ORDER BY x) FROM m;

-- Over event-time windows whose closed windows release their state (the
-- arrangement of their values goes with them).
--! postgres CREATE TABLE bids (id int, ts timestamp, price float8)
CREATE TABLE bids (id int, ts timestamp, price float8) WITH (event_time = 'ts', lateness = '10 minutes');
--! postgres CREATE MATERIALIZED VIEW windowed AS SELECT window_start, percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median, mode() WITHIN GROUP (ORDER BY price DESC) AS m, rank(10) WITHIN GROUP (ORDER BY price) AS r FROM (SELECT b.*, date_bin('30 minutes', b.ts, '1970-01-01') AS window_start FROM bids b WHERE isfinite(b.ts)) w GROUP BY window_start
CREATE MATERIALIZED VIEW windowed AS
  SELECT window_start, percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median,
         mode() WITHIN GROUP (ORDER BY price DESC) AS m, rank(10) WITHIN GROUP (ORDER BY price) AS r
  FROM TUMBLE(bids, ts, '30 minutes') GROUP BY window_start, window_end;
INSERT INTO bids VALUES (1, '2026-05-01 09:00', 10), (2, '2026-05-01 09:10', 20), (3, '2026-05-01 09:12', 20);
INSERT INTO bids VALUES (4, '2026-05-01 09:31', 5), (5, '2026-05-01 09:35', 7);
INSERT INTO bids VALUES (6, '2026-05-01 10:45', 1);
DELETE FROM bids WHERE id = 6;
INSERT INTO bids VALUES (7, '2026-05-01 10:50', 30), (8, '2026-05-01 10:55', 40);
