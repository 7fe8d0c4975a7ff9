-- Subqueries in FROM (nested, aggregated, joined) and views defined over
-- views: a materialized view over materialized views (three levels), a
-- materialized view over an inline view, an inline view over a
-- materialized view, and a union of a view with a table. A change to a
-- base table must reach every view above it in the same statement.

CREATE TABLE events (id int, kind text, val int, at date);
CREATE TABLE kinds (kind text, weight numeric(4,1));

INSERT INTO events VALUES
  (1, 'click', 1, '2024-01-01'), (2, 'click', 3, '2024-01-01'), (3, 'view', 10, '2024-01-02'),
  (4, 'view', NULL, '2024-01-02'), (5, 'buy', 100, '2024-01-03'), (6, NULL, 7, NULL);
INSERT INTO kinds VALUES ('click', 1.5), ('view', 0.5), ('buy', 10.0), ('refund', -10.0);

-- Subqueries in FROM.
CREATE MATERIALIZED VIEW filtered_sub AS
SELECT s.id, s.doubled FROM (SELECT id, val * 2 AS doubled FROM events WHERE val IS NOT NULL) s WHERE s.doubled > 2;

CREATE MATERIALIZED VIEW nested_sub AS
SELECT x.k, x.n + 1 AS n_plus_1
FROM (SELECT y.k, y.n FROM (SELECT kind AS k, count(*) AS n FROM events GROUP BY kind) y WHERE y.n > 0) x;

CREATE MATERIALIZED VIEW having_by_sub AS
SELECT kind, total FROM (SELECT kind, sum(val) AS total FROM events GROUP BY kind) t WHERE total > 5;

CREATE MATERIALIZED VIEW joined_subs AS
SELECT a.kind, a.n, b.weight * a.n AS score
FROM (SELECT kind, count(*) AS n FROM events GROUP BY kind) a
JOIN (SELECT kind, weight FROM kinds WHERE weight > 0) b ON a.kind = b.kind;

CREATE MATERIALIZED VIEW aggregate_of_distinct AS
SELECT count(*) AS kinds_seen, max(kind) AS last_kind FROM (SELECT DISTINCT kind FROM events) d;

CREATE MATERIALIZED VIEW aggregate_of_aggregate AS
SELECT max(n) AS busiest, min(n) AS quietest, sum(n) AS total FROM (SELECT at, count(*) AS n FROM events GROUP BY at) per_day;

-- A chain of materialized views: base -> level1 -> level2 -> level3.
CREATE MATERIALIZED VIEW level1 AS SELECT id, kind, val FROM events WHERE val IS NOT NULL;
CREATE MATERIALIZED VIEW level2 AS SELECT kind, count(*) AS n, sum(val) AS total FROM level1 GROUP BY kind;
CREATE MATERIALIZED VIEW level3 AS
SELECT l2.kind, l2.total, k.weight, l2.total * k.weight AS weighted FROM level2 l2 JOIN kinds k ON k.kind = l2.kind;
CREATE MATERIALIZED VIEW level4 AS SELECT sum(weighted) AS score, count(*) AS kinds FROM level3;

-- Inline views mixed in.
CREATE VIEW inline_clicks AS SELECT id, val FROM events WHERE kind = 'click';
CREATE MATERIALIZED VIEW over_inline AS SELECT count(*) AS n, sum(val) AS total FROM inline_clicks;
CREATE VIEW inline_over_mat AS SELECT kind, total FROM level2 WHERE n > 1;
CREATE MATERIALIZED VIEW mat_over_inline_over_mat AS SELECT kind FROM inline_over_mat WHERE total > 0;

-- A view joined with a table and with another view, and unioned with a table.
CREATE MATERIALIZED VIEW view_join_view AS
SELECT a.id, b.total FROM level1 a JOIN level2 b ON a.kind = b.kind WHERE a.val * 2 > b.total;
CREATE MATERIALIZED VIEW view_union_table AS
SELECT kind FROM level2 UNION ALL SELECT kind FROM kinds;

SELECT * FROM level3 ORDER BY kind;
SELECT * FROM inline_over_mat ORDER BY kind;

INSERT INTO events VALUES (7, 'click', 5, '2024-01-03'), (8, 'refund', -50, '2024-01-04'), (8, 'refund', -50, '2024-01-04');
UPDATE events SET val = 20 WHERE id = 4;
UPDATE events SET kind = 'view' WHERE id = 2;
UPDATE kinds SET weight = 2.0 WHERE kind = 'view';
DELETE FROM events WHERE kind = 'buy';
UPDATE events SET kind = 'click' WHERE kind IS NULL;

BEGIN;
DELETE FROM events WHERE kind = 'view';
INSERT INTO events VALUES (9, 'view', 1, '2024-01-05');
UPDATE kinds SET kind = 'purchase' WHERE kind = 'buy';
COMMIT;

DELETE FROM kinds WHERE weight < 0;
DELETE FROM events WHERE val > 4;
SELECT * FROM level4;
DELETE FROM events;
