-- Global operators split into a partial step per worker and a final step
-- (aggregates without GROUP BY, ORDER BY ... LIMIT without a partition),
-- and recursive queries iterating on every worker, compared with
-- PostgreSQL after every statement. The changes are large enough to give
-- every worker rows (the harness splits every step), and they delete the
-- current extremes and the rows in the top, so that the next ones must
-- come from other buckets.

CREATE TABLE m (id int PRIMARY KEY, v int, n numeric(8,3), f float8, ok boolean);

CREATE MATERIALIZED VIEW totals AS
SELECT count(*) AS c, count(v) AS cv, sum(v) AS sv, avg(v) AS av, min(v) AS lo, max(v) AS hi,
       sum(n) AS sn, avg(n) AS an, min(n) AS ln, max(n) AS hn,
       var_samp(v) AS vs, stddev_pop(n) AS sp, bool_and(ok) AS all_ok, bool_or(ok) AS any_ok,
       min(v) FILTER (WHERE ok) AS lo_ok, count(*) FILTER (WHERE v > 500) AS big
FROM m;

CREATE MATERIALIZED VIEW float_totals AS SELECT count(f) AS c, min(f) AS lo, max(f) AS hi FROM m;

CREATE MATERIALIZED VIEW top5 AS SELECT id, v FROM m ORDER BY v DESC, id LIMIT 5;
CREATE MATERIALIZED VIEW page AS SELECT id, v FROM m ORDER BY v, id LIMIT 4 OFFSET 3;
CREATE MATERIALIZED VIEW top_numbered AS
  SELECT id, n, row_number() OVER (ORDER BY n DESC NULLS LAST, id) AS rn FROM m;
CREATE MATERIALIZED VIEW top_numbered_3 AS SELECT id, n, rn FROM top_numbered WHERE rn <= 3;

INSERT INTO m SELECT i, (i * 37) % 1000, ((i * 13) % 200) / 8.0, (i % 17) / 3.0, i % 5 <> 0
FROM generate_series(1, 300) i;

-- The extremes and the top rows go; the next ones are in other buckets.
DELETE FROM m WHERE v >= 990 OR v <= 10;
DELETE FROM m WHERE v BETWEEN 975 AND 989;
UPDATE m SET v = v + 1000 WHERE id % 7 = 0;
UPDATE m SET n = NULL, f = NULL WHERE id % 3 = 0;
DELETE FROM m WHERE v > 1500;
INSERT INTO m SELECT i, -i, -i / 4.0, -i, false FROM generate_series(301, 340) i;
DELETE FROM m WHERE id > 300 AND id % 2 = 0;

-- Everything goes, then a little comes back.
DELETE FROM m;
INSERT INTO m VALUES (1, 5, 1.5, 0.5, true), (2, 5, 1.500, 0.5, NULL);

-- Copies of a row share its bucket: the partial top-k keeps offset+limit
-- of them, and the final takes the copies it needs.
CREATE TABLE d (v int);
CREATE MATERIALIZED VIEW d_page AS SELECT v FROM d ORDER BY v LIMIT 4 OFFSET 3;
CREATE MATERIALIZED VIEW d_top AS SELECT v FROM d ORDER BY v DESC LIMIT 6;
CREATE MATERIALIZED VIEW d_totals AS SELECT count(*) AS c, min(v) AS lo, max(v) AS hi FROM d;
INSERT INTO d SELECT i % 10 FROM generate_series(1, 300) i;
DELETE FROM d WHERE v IN (0, 9);
INSERT INTO d VALUES (0), (0), (9);
DELETE FROM d WHERE v < 5;

-- Reachability and path counts over a larger graph with cycles.
CREATE TABLE edges (src int, dst int);

CREATE MATERIALIZED VIEW reach AS
  WITH RECURSIVE r(node) AS (
    SELECT 0
    UNION
    SELECT e.dst FROM r JOIN edges e ON e.src = r.node)
  SELECT node FROM r;

CREATE MATERIALIZED VIEW paths AS
  WITH RECURSIVE p(node, depth) AS (
    SELECT 0, 0
    UNION ALL
    SELECT e.dst, p.depth + 1 FROM p JOIN edges e ON e.src = p.node WHERE p.depth < 5)
  SELECT depth, count(*) AS n FROM p GROUP BY depth;

INSERT INTO edges SELECT i, (i * 3 + 1) % 200 FROM generate_series(0, 199) i;
INSERT INTO edges SELECT i, (i + 7) % 200 FROM generate_series(0, 199, 2) i;
DELETE FROM edges WHERE src % 10 = 1;
DELETE FROM edges WHERE src = 0 AND dst = 1;
INSERT INTO edges VALUES (0, 1), (1, 0);
DELETE FROM edges WHERE src < 100;
