-- Inner joins over tables with primary keys: their rows are never equal,
-- so the join arranges them without reading its arrangement first
-- (ops.Join.SetInputs). Every change must still give PostgreSQL's
-- answers: inserts, deletes, updates of the join key, of other columns
-- and of the primary key itself, a row inserted and deleted (or deleted
-- and put back) in one transaction, many rows under one join key, NULL
-- join keys, numeric keys written at different scales, filters over the
-- scans, three-way and self joins, TRUNCATE.

CREATE TABLE stores (store int PRIMARY KEY, region int, name text);
CREATE TABLE orders (id bigint PRIMARY KEY, store int, amount numeric(10,2));
CREATE TABLE lines (order_id bigint, n int, qty int, PRIMARY KEY (order_id, n));
CREATE TABLE prices (k numeric PRIMARY KEY, p int);

CREATE MATERIALIZED VIEW per_region AS SELECT s.region, sum(o.amount) AS total, count(*) AS n FROM orders o JOIN stores s ON o.store = s.store GROUP BY s.region;
CREATE MATERIALIZED VIEW pairs AS SELECT o.id, o.amount, s.name FROM orders o JOIN stores s ON o.store = s.store;
CREATE MATERIALIZED VIEW big AS SELECT o.id, s.region FROM orders o JOIN stores s ON o.store = s.store WHERE o.amount > 10 AND s.region <> 3;
CREATE MATERIALIZED VIEW three AS SELECT s.region, l.qty, o.id FROM lines l JOIN orders o ON l.order_id = o.id JOIN stores s ON s.store = o.store;
CREATE MATERIALIZED VIEW same_region AS SELECT a.store AS a, b.store AS b FROM stores a JOIN stores b ON a.region = b.region AND a.store < b.store;
CREATE MATERIALIZED VIEW priced AS SELECT o.id, p.k, p.p FROM orders o JOIN prices p ON o.amount = p.k;

INSERT INTO stores VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 3, 'd'), (5, NULL, 'e');
INSERT INTO orders VALUES (10, 1, 5.00), (11, 1, 12.50), (12, 2, 20.00), (13, 3, 1.00), (14, NULL, 7.00), (15, 9, 3.00), (16, 4, 30.00);
INSERT INTO lines VALUES (10, 1, 2), (10, 2, 3), (11, 1, 1), (12, 1, 5), (16, 1, 9);
INSERT INTO prices VALUES (5, 50), (12.5, 125), (1.0, 10), (30.00, 300);

SELECT * FROM per_region ORDER BY region;
SELECT * FROM pairs ORDER BY id;

-- Many orders under one store in one statement.
INSERT INTO orders SELECT g, 1, g % 7 FROM generate_series(100, 160) g;

-- The join key moves; another column changes; the primary key changes.
UPDATE orders SET store = 2 WHERE id = 10;
UPDATE orders SET amount = amount + 1 WHERE store = 1 AND id < 120;
UPDATE orders SET id = id + 1000 WHERE id BETWEEN 150 AND 155;
UPDATE stores SET region = 3 WHERE store = 1;
UPDATE stores SET store = 6 WHERE store = 5;
UPDATE prices SET k = 5.00 WHERE k = 5;

-- A row inserted and deleted in one transaction, a row deleted and put
-- back, a key freed and taken again by another row.
BEGIN;
INSERT INTO orders VALUES (200, 1, 40.00);
DELETE FROM orders WHERE id = 200;
DELETE FROM orders WHERE id = 12;
INSERT INTO orders VALUES (12, 2, 20.00);
DELETE FROM stores WHERE store = 3;
INSERT INTO stores VALUES (3, 1, 'c2');
INSERT INTO lines VALUES (12, 2, 4);
DELETE FROM lines WHERE order_id = 12 AND n = 2;
COMMIT;

BEGIN;
UPDATE orders SET store = 4 WHERE id = 11;
UPDATE orders SET store = 1 WHERE id = 11;
UPDATE stores SET region = 2 WHERE store = 2;
UPDATE stores SET region = 1 WHERE store = 2;
INSERT INTO prices VALUES (21, 210);
UPDATE prices SET k = 21.00 WHERE k = 21;
COMMIT;

-- A transaction that fails changes nothing.
BEGIN;
INSERT INTO orders VALUES (300, 1, 1.00);
--! error 23505
INSERT INTO orders VALUES (300, 2, 2.00);
ROLLBACK;

SELECT * FROM three ORDER BY 1, 2, 3;

DELETE FROM orders WHERE amount < 4;
DELETE FROM stores WHERE region IN (1, 3);
INSERT INTO stores VALUES (1, 4, 'a2'), (7, 4, 'g');
TRUNCATE lines;
INSERT INTO lines SELECT id, 1, 1 FROM orders WHERE id < 130;
TRUNCATE orders;
INSERT INTO orders VALUES (1, 1, 5.0), (2, 7, 12.5), (3, 2, 1.00);
