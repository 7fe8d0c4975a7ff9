-- GROUP BY with every first-tier aggregate: COUNT(*), COUNT(x),
-- COUNT(DISTINCT x), SUM, AVG, MIN, MAX, bool_and, bool_or, and FILTER;
-- HAVING; expressions over aggregates and aggregates over expressions.
-- The changes insert duplicates and NULLs, move rows between groups,
-- delete the current MIN/MAX, empty a group, and bring it back.

CREATE TABLE sales (
  id int,
  region text,
  product text,
  qty int,
  price numeric(8,2),
  big bigint,
  small smallint,
  ok boolean,
  day date
);

-- Created over an empty table: empty until rows arrive.
CREATE MATERIALIZED VIEW by_region AS
SELECT region,
       count(*) AS n,
       count(qty) AS n_qty,
       count(DISTINCT product) AS products,
       sum(qty) AS qty,
       sum(price) AS revenue,
       sum(big) AS big_sum,
       sum(small) AS small_sum,
       avg(qty) AS avg_qty,
       avg(price) AS avg_price,
       avg(big) AS avg_big,
       avg(small) AS avg_small,
       min(qty) AS min_qty,
       max(qty) AS max_qty,
       min(price) AS min_price,
       max(price) AS max_price,
       min(product) AS first_product,
       max(product) AS last_product,
       min(day) AS first_day,
       max(day) AS last_day,
       bool_and(ok) AS all_ok,
       bool_or(ok) AS any_ok,
       count(*) FILTER (WHERE ok) AS n_ok,
       sum(qty) FILTER (WHERE price > 10) AS qty_pricey,
       max(price) FILTER (WHERE NOT ok) AS max_price_not_ok,
       count(DISTINCT qty) FILTER (WHERE qty > 1) AS distinct_big_qty
FROM sales
GROUP BY region;

CREATE MATERIALIZED VIEW by_region_product AS
SELECT region, product, count(*) AS n, sum(qty * price) AS value, min(id) AS min_id, max(id) AS max_id
FROM sales GROUP BY region, product;

CREATE MATERIALIZED VIEW by_parity AS
SELECT qty % 2 AS parity, count(*) AS n, sum(qty) AS total, count(DISTINCT region) AS regions
FROM sales GROUP BY qty % 2;

CREATE MATERIALIZED VIEW by_day_ok AS
SELECT day, ok, count(*) AS n, avg(price) AS avg_price
FROM sales GROUP BY day, ok;

CREATE MATERIALIZED VIEW over_aggregates AS
SELECT region,
       sum(qty) * 2 AS double_qty,
       count(*) + 1 AS n_plus_1,
       max(qty) - min(qty) AS qty_range,
       CASE WHEN count(*) > 1 THEN 'many' ELSE 'one' END AS size,
       COALESCE(sum(qty), 0) AS qty_or_zero,
       sum(price) / count(*) AS manual_avg
FROM sales GROUP BY region;

CREATE MATERIALIZED VIEW busy_regions AS
SELECT region, count(*) AS n FROM sales GROUP BY region HAVING count(*) > 1;

CREATE MATERIALIZED VIEW rich_regions AS
SELECT region, sum(price) AS revenue FROM sales
GROUP BY region HAVING sum(qty) > 10 AND min(price) < 50;

CREATE MATERIALIZED VIEW having_only AS
SELECT region FROM sales GROUP BY region HAVING bool_or(ok) AND count(DISTINCT product) >= 2;

CREATE MATERIALIZED VIEW group_by_position AS
SELECT product, count(*) AS n FROM sales GROUP BY 1;

INSERT INTO sales VALUES
  (1, 'north', 'apple', 3, 1.50, 9223372036854775807, 32767, true, '2024-01-01'),
  (2, 'north', 'pear', 5, 2.25, 9223372036854775807, 32767, true, '2024-01-01'),
  (3, 'south', 'apple', 10, 1.50, -5, 1, false, '2024-01-02'),
  (4, 'south', 'plum', NULL, 99.99, NULL, NULL, NULL, '2024-01-02'),
  (5, NULL, 'apple', 1, 0.10, 1, 1, true, NULL),
  (6, 'east', NULL, 7, 12.00, 2, 2, false, '2024-01-03');

-- Duplicate rows.
INSERT INTO sales VALUES
  (1, 'north', 'apple', 3, 1.50, 9223372036854775807, 32767, true, '2024-01-01'),
  (1, 'north', 'apple', 3, 1.50, 9223372036854775807, 32767, true, '2024-01-01');

-- A row moves from north to south, and another from south to a new group.
UPDATE sales SET region = 'south' WHERE id = 2;
UPDATE sales SET region = 'west' WHERE id = 4;

-- Delete the maximum of a group (one of several copies, then all).
DELETE FROM sales WHERE id = 3;
UPDATE sales SET qty = 2 WHERE id = 1 AND qty = 3;

-- NULLs: a NULL group key, NULL values in every aggregate's argument.
INSERT INTO sales VALUES (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (8, 'east', 'fig', NULL, NULL, NULL, NULL, true, '2024-01-03');
UPDATE sales SET ok = NULL WHERE region = 'east';

-- Empty a group, then bring it back.
DELETE FROM sales WHERE region = 'east';
INSERT INTO sales VALUES (9, 'east', 'kiwi', 4, 40.00, 4, 4, true, '2024-01-04');

-- Delete the minimum, and change a value in place.
DELETE FROM sales WHERE id = 5;
UPDATE sales SET price = price + 0.01, qty = qty + 1 WHERE qty IS NOT NULL;

-- Many rows in and out at once.
INSERT INTO sales SELECT id + 100, region, product, qty * 2, price, big, small, NOT ok, day + 1 FROM sales;
DELETE FROM sales WHERE id > 100 AND qty > 10;
UPDATE sales SET region = 'north' WHERE region IS NULL;
DELETE FROM sales WHERE region = 'south';

SELECT region, count(*) AS n, sum(qty) AS qty, avg(price) AS avg_price FROM sales GROUP BY region ORDER BY region;

-- Empty everything, then refill.
DELETE FROM sales;
INSERT INTO sales VALUES (10, 'north', 'apple', 1, 1.00, 1, 1, true, '2024-02-01'), (11, 'north', 'apple', 1, 1.00, 1, 1, true, '2024-02-01');
