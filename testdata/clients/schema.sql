CREATE TABLE customers (name text PRIMARY KEY, region text);
CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2), placed timestamptz, note varchar(40) DEFAULT 'none', qty integer DEFAULT 1, flag boolean, ratio double precision, day date, small smallint, r real, payload bytea, at timestamp, wait interval);
CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 100;
CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer;
CREATE MATERIALIZED VIEW regions AS SELECT c.region, count(*) AS orders FROM orders o JOIN customers c ON c.name = o.customer GROUP BY c.region;
