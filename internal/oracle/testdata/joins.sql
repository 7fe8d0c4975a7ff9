-- Inner and cross joins of two to four tables, on keys of type integer,
-- text, numeric and date (and mixed integer widths), with residual
-- predicates, NULL keys (which never match with =, and do with IS NOT
-- DISTINCT FROM), duplicates on both sides (their counts multiply),
-- self-joins, and aggregates over joins. The changes update keys so rows
-- change partners, and change both sides in one transaction.

CREATE TABLE customers (id int, name text, city text, since date, tier smallint);
CREATE TABLE orders (id bigint, cust_id int, amount numeric(10,2), day date, note text);
CREATE TABLE items (order_id bigint, sku text, qty int);
CREATE TABLE cities (name text, country text, pop int);
CREATE TABLE rates (amount numeric(10,2), rate numeric(4,3));
CREATE TABLE holidays (day date, label text);
CREATE TABLE bands (lo numeric, hi numeric, band text);

INSERT INTO customers VALUES
  (1, 'ann', 'oslo', '2020-01-01', 1),
  (2, 'bob', 'rome', '2021-06-15', 2),
  (3, 'cyd', 'oslo', '2022-03-01', 1),
  (4, 'dan', NULL, '2023-01-01', NULL),
  (5, 'eve', 'lima', NULL, 3);
INSERT INTO orders VALUES
  (10, 1, 25.00, '2024-01-01', 'a'),
  (11, 1, 5.50, '2024-01-02', NULL),
  (12, 2, 100.00, '2024-12-25', 'b'),
  (13, 3, 25.00, '2024-01-01', 'c'),
  (14, NULL, 7.00, '2024-02-02', 'orphan'),
  (15, 9, 1.00, '2024-03-03', 'no customer');
INSERT INTO items VALUES (10, 'pen', 2), (10, 'ink', 1), (12, 'pen', 10), (13, 'pad', 3), (99, 'pen', 1);
INSERT INTO cities VALUES ('oslo', 'no', 700000), ('rome', 'it', 2800000), ('paris', 'fr', 2100000);
INSERT INTO rates VALUES (25.00, 0.100), (100.00, 0.050), (5.5, 0.200), (NULL, 0.900);
INSERT INTO holidays VALUES ('2024-01-01', 'new year'), ('2024-12-25', 'christmas'), (NULL, 'unknown');
INSERT INTO bands VALUES (0, 10, 'small'), (10, 50, 'medium'), (50, 1000, 'large'), (20, 30, 'overlap');

-- Two tables, integer key (int = bigint on the other side of items).
CREATE MATERIALIZED VIEW customer_orders AS
SELECT c.name, o.id AS order_id, o.amount
FROM customers c JOIN orders o ON o.cust_id = c.id;

-- Text key.
CREATE MATERIALIZED VIEW customer_cities AS
SELECT c.name, ci.country, ci.pop FROM customers c JOIN cities ci ON c.city = ci.name;

-- Numeric key.
CREATE MATERIALIZED VIEW order_rates AS
SELECT o.id, o.amount, r.rate, o.amount * r.rate AS fee FROM orders o JOIN rates r ON o.amount = r.amount;

-- Date key.
CREATE MATERIALIZED VIEW holiday_orders AS
SELECT o.id, h.label FROM orders o INNER JOIN holidays h ON o.day = h.day;

-- Key plus residual predicates, in ON and in WHERE.
CREATE MATERIALIZED VIEW big_recent_orders AS
SELECT c.name, o.id, o.amount
FROM customers c JOIN orders o ON o.cust_id = c.id AND o.amount > 10
WHERE o.day >= c.since AND c.tier IS NOT NULL;

-- No equality at all: a range join.
CREATE MATERIALIZED VIEW order_bands AS
SELECT o.id, b.band FROM orders o JOIN bands b ON o.amount >= b.lo AND o.amount < b.hi;

-- Three and four tables.
CREATE MATERIALIZED VIEW order_countries AS
SELECT o.id, c.name, ci.country
FROM orders o JOIN customers c ON o.cust_id = c.id JOIN cities ci ON ci.name = c.city;

CREATE MATERIALIZED VIEW item_countries AS
SELECT i.sku, i.qty, o.id AS order_id, c.name, ci.country
FROM items i
JOIN orders o ON i.order_id = o.id
JOIN customers c ON o.cust_id = c.id
JOIN cities ci ON c.city = ci.name
WHERE i.qty > 1 OR ci.country = 'it';

-- Comma joins with the condition in WHERE, and a cross join.
CREATE MATERIALIZED VIEW comma_join AS
SELECT c.name, i.sku FROM customers c, orders o, items i WHERE c.id = o.cust_id AND o.id = i.order_id;

CREATE MATERIALIZED VIEW all_pairs AS
SELECT c.name, ci.name AS city FROM customers c CROSS JOIN cities ci WHERE c.tier = 1;

CREATE MATERIALIZED VIEW product AS
SELECT ci.name AS city, b.band FROM cities ci CROSS JOIN bands b;

-- A self-join.
CREATE MATERIALIZED VIEW neighbours AS
SELECT a.name AS first, b.name AS second, a.city
FROM customers a JOIN customers b ON a.city = b.city AND a.id < b.id;

-- NULL keys match with IS NOT DISTINCT FROM.
CREATE MATERIALIZED VIEW same_tier AS
SELECT a.id AS a_id, b.id AS b_id FROM customers a JOIN customers b ON a.tier IS NOT DISTINCT FROM b.tier AND a.id <> b.id;

-- USING.
CREATE TABLE city_mayors (city text, mayor text);
INSERT INTO city_mayors VALUES ('oslo', 'm1'), ('rome', 'm2'), ('rome', 'm2b');
CREATE MATERIALIZED VIEW mayors AS SELECT city, c.name, m.mayor FROM customers c JOIN city_mayors m USING (city);

-- Aggregates over joins.
CREATE MATERIALIZED VIEW spend AS
SELECT c.name, count(*) AS orders, sum(o.amount) AS total, max(o.day) AS last_day, count(DISTINCT i.sku) AS skus
FROM customers c JOIN orders o ON o.cust_id = c.id JOIN items i ON i.order_id = o.id
GROUP BY c.name;

CREATE MATERIALIZED VIEW country_spend AS
SELECT ci.country, sum(o.amount) AS total, count(*) AS n
FROM orders o JOIN customers c ON o.cust_id = c.id JOIN cities ci ON ci.name = c.city
GROUP BY ci.country HAVING sum(o.amount) > 20;

SELECT c.name, o.id FROM customers c JOIN orders o ON o.cust_id = c.id ORDER BY c.name, o.id;

-- Duplicates on both sides multiply.
INSERT INTO customers VALUES (1, 'ann', 'oslo', '2020-01-01', 1);
INSERT INTO orders VALUES (10, 1, 25.00, '2024-01-01', 'a');
INSERT INTO items VALUES (10, 'pen', 2);

-- Keys change: rows change partners.
UPDATE orders SET cust_id = 3 WHERE id = 11;
UPDATE customers SET city = 'rome' WHERE id = 3;
UPDATE customers SET id = 9 WHERE name = 'eve';
UPDATE orders SET amount = 100.00, day = '2024-12-25' WHERE id = 13;
UPDATE rates SET amount = 7.00 WHERE rate = 0.900;

-- NULL keys become non-NULL and back.
UPDATE customers SET city = 'paris', tier = 3 WHERE id = 4;
UPDATE orders SET cust_id = 4 WHERE id = 14;
UPDATE customers SET tier = NULL WHERE id = 2;
UPDATE holidays SET day = '2024-02-02' WHERE label = 'unknown';

-- Both sides in one transaction, including a key moving and moving back.
BEGIN;
UPDATE customers SET city = 'lima' WHERE id = 1;
INSERT INTO cities VALUES ('lima', 'pe', 10000000);
UPDATE orders SET cust_id = 2 WHERE cust_id = 1;
UPDATE orders SET cust_id = 1 WHERE id = 10;
DELETE FROM items WHERE sku = 'ink';
COMMIT;

-- Deletes on each side.
DELETE FROM cities WHERE name = 'oslo';
DELETE FROM customers WHERE id = 1;
DELETE FROM orders WHERE amount < 10;
DELETE FROM bands WHERE band = 'overlap';
INSERT INTO bands VALUES (0, 1000, 'any');

SELECT c.name, o.id, i.sku FROM customers c JOIN orders o ON o.cust_id = c.id JOIN items i ON i.order_id = o.id ORDER BY 1, 2, 3;

-- Empty one side entirely, then refill it.
DELETE FROM orders;
INSERT INTO orders VALUES (20, 2, 30.00, '2024-12-25', 'again'), (21, 9, 5.50, '2024-01-01', NULL);

-- Keys compare as their types do. Text: case, trailing spaces and the
-- empty string matter (also against varchar). Timestamptz: the same
-- instant written with different offsets is equal. Interval: '1 day'
-- equals '24 hours' and '1 mon' equals '30 days'.
CREATE TABLE tk1 (k text, v int);
CREATE TABLE tk2 (k varchar(5), w int);
INSERT INTO tk1 VALUES ('x', 1), ('x ', 2), ('X', 3), ('', 4), (NULL, 5), ('é', 6);
INSERT INTO tk2 VALUES ('x', 10), ('x ', 20), ('', 40), (NULL, 50), ('é', 60), ('e', 70);
CREATE MATERIALIZED VIEW text_keys AS SELECT tk1.k, tk1.v, tk2.w FROM tk1 JOIN tk2 ON tk1.k = tk2.k;
UPDATE tk2 SET k = 'X' WHERE w = 10;
DELETE FROM tk1 WHERE k = '';

CREATE TABLE ev1 (at timestamptz, what text);
CREATE TABLE ev2 (at timestamptz, who text);
INSERT INTO ev1 VALUES ('2024-01-01 00:00:00+00', 'a'), ('2024-06-01 12:00:00.5+02', 'b');
INSERT INTO ev2 VALUES ('2024-01-01 01:00:00+01', 'x'), ('2024-06-01 10:00:00.5+00', 'y'), ('2024-06-01 10:00:00.500001+00', 'z');
CREATE MATERIALIZED VIEW same_instant AS SELECT ev1.what, ev2.who, ev1.at FROM ev1 JOIN ev2 ON ev1.at = ev2.at;
INSERT INTO ev1 VALUES ('2024-05-31 22:00:00.500001-12', 'c');

CREATE TABLE span1 (d interval, label text);
CREATE TABLE span2 (d interval, note text);
INSERT INTO span1 VALUES ('1 day', 'day'), ('1 mon', 'month'), ('90 minutes', 'ninety');
INSERT INTO span2 VALUES ('24 hours', 'hours'), ('30 days', 'days'), ('01:30:00', 'clock'), ('1 day 00:00:01', 'not quite');
CREATE MATERIALIZED VIEW equal_spans AS SELECT span1.label, span2.note, span1.d AS d1, span2.d AS d2 FROM span1 JOIN span2 ON span1.d = span2.d;
DELETE FROM span2 WHERE note = 'days';
INSERT INTO span2 VALUES ('720 hours', 'hours of a month');
