-- Set operations, TopK, DISTINCT ON and windows combined with each other,
-- with joins, aggregates, WITH queries and views on views. Orders are made
-- total with unique keys (o.id, c.id) wherever a choice among ties would
-- show.

CREATE TABLE c (id int PRIMARY KEY, region text);
CREATE TABLE o (id int PRIMARY KEY, cid int, amount numeric(8,2), day date);

-- The two largest orders of each region, through a join.
CREATE MATERIALIZED VIEW region_top AS
  SELECT region, id, amount, rn FROM (
    SELECT c.region, o.id, o.amount, row_number() OVER (PARTITION BY c.region ORDER BY o.amount DESC, o.id) AS rn
    FROM o JOIN c ON c.id = o.cid) t
  WHERE rn <= 2;
-- A view on that view: regions whose runner-up exceeds 50.
CREATE MATERIALIZED VIEW strong_regions AS SELECT region FROM region_top WHERE rn = 2 AND amount > 50;
-- Customers with orders on both the first and the last day, minus those in region 'x'.
CREATE MATERIALIZED VIEW both_days AS
  SELECT cid FROM o WHERE day = '2024-01-01'
  INTERSECT SELECT cid FROM o WHERE day = '2024-01-31'
  EXCEPT SELECT id FROM c WHERE region = 'x';
-- Ranks over per-customer totals, ordered and limited.
CREATE MATERIALIZED VIEW top_customers AS
  WITH totals AS (SELECT cid, sum(amount) AS total FROM o GROUP BY cid)
  SELECT cid, total, dense_rank() OVER (ORDER BY total DESC) AS dr FROM totals ORDER BY total DESC, cid LIMIT 3;
-- Running totals per customer by day and id; the latest order of each customer.
CREATE MATERIALIZED VIEW running AS
  SELECT id, cid, sum(amount) OVER (PARTITION BY cid ORDER BY day, id) AS so_far,
         amount - lag(amount, 1, 0) OVER (PARTITION BY cid ORDER BY day, id) AS change
  FROM o;
CREATE MATERIALIZED VIEW latest AS SELECT DISTINCT ON (cid) cid, id, day FROM o ORDER BY cid, day DESC, id DESC;
-- A window over a set operation, and a set operation over TopKs.
CREATE MATERIALIZED VIEW ranked_union AS
  SELECT k, rank() OVER (ORDER BY k) AS r FROM (SELECT cid AS k FROM o UNION ALL SELECT id FROM c) u;
CREATE MATERIALIZED VIEW tops_except AS
  (SELECT id FROM o ORDER BY amount DESC, id LIMIT 3) EXCEPT ALL (SELECT id FROM o ORDER BY day, id LIMIT 2);
-- Counts of orders per rank of amount within their day.
CREATE MATERIALIZED VIEW rank_hist AS
  SELECT r, count(*) AS n FROM (SELECT rank() OVER (PARTITION BY day ORDER BY amount) AS r FROM o) t GROUP BY r;

INSERT INTO c VALUES (1, 'n'), (2, 'n'), (3, 's'), (4, 'x'), (5, NULL);
INSERT INTO o VALUES
  (10, 1, 30.00, '2024-01-01'), (11, 1, 70.50, '2024-01-31'), (12, 2, 55.00, '2024-01-01'),
  (13, 2, 55.00, '2024-01-31'), (14, 3, 99.99, '2024-01-15'), (15, 4, 10.00, '2024-01-01'),
  (16, 4, 12.00, '2024-01-31'), (17, 5, 5.00, '2024-01-01'), (18, NULL, 1.00, '2024-01-31');
UPDATE o SET amount = 80 WHERE id = 10;
UPDATE c SET region = 's' WHERE id = 2;
DELETE FROM o WHERE id = 14;
INSERT INTO o VALUES (19, 3, 60.00, '2024-01-31'), (20, 3, 60.00, '2024-01-01');
BEGIN;
UPDATE o SET cid = 1 WHERE cid = 2;
DELETE FROM c WHERE id = 2;
INSERT INTO o VALUES (21, 6, 1000.00, NULL);
COMMIT;
BEGIN;
INSERT INTO c VALUES (6, 'n');
DELETE FROM o WHERE id = 21;
DELETE FROM c WHERE id = 6;
COMMIT;
UPDATE o SET day = day + 1;
DELETE FROM o WHERE amount < 60;
DELETE FROM c;
DELETE FROM o;
