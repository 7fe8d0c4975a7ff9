-- TRUNCATE empties tables, and the views over them change by the rows
-- removed: a single table, several tables in one statement (also named
-- twice), the optional words (TABLE, ONLY, RESTART/CONTINUE IDENTITY,
-- CASCADE/RESTRICT), and on objects that are not tables. (Inside a
-- transaction block PostgreSQL's TRUNCATE locks out the readers that
-- compare the views, so blocks are tested in internal/runtime.)

CREATE TABLE orders (id int PRIMARY KEY, cust int, amount numeric(10,2));
CREATE TABLE notes (cust int, body text);
CREATE MATERIALIZED VIEW per_cust AS SELECT cust, count(*) AS n, sum(amount) AS total FROM orders GROUP BY cust;
CREATE MATERIALIZED VIEW noted AS SELECT o.cust, count(*) AS n FROM orders o JOIN notes n ON n.cust = o.cust GROUP BY o.cust;
CREATE MATERIALIZED VIEW everything AS SELECT count(*) AS n FROM orders;

INSERT INTO orders SELECT g, g % 3, g * 1.25 FROM generate_series(1, 30) g;
INSERT INTO notes VALUES (0, 'a'), (1, 'b'), (1, 'b'), (2, NULL);

TRUNCATE notes;
TRUNCATE TABLE orders, notes, orders;
INSERT INTO orders VALUES (1, 1, 10.00), (2, 1, 20.00);
INSERT INTO notes VALUES (1, 'again');
TRUNCATE ONLY notes RESTART IDENTITY CASCADE;
TRUNCATE orders CONTINUE IDENTITY RESTRICT;
INSERT INTO orders VALUES (1, 5, 1.00);
INSERT INTO notes VALUES (5, 'x');

--! error 42P01
TRUNCATE nope;
--! error 42809
TRUNCATE per_cust;
