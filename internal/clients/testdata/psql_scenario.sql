-- The client scenario with psql: run with psql -X -q -f against a fresh
-- server; the output is compared with psql_scenario.expected.
CREATE TABLE ps_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2));
CREATE MATERIALIZED VIEW ps_totals AS
    SELECT customer, sum(amount) AS total, count(*) AS n FROM ps_orders GROUP BY customer;

-- Parameterized DML through a prepared statement.
PREPARE ins (int, text, numeric) AS INSERT INTO ps_orders VALUES ($1, $2, $3);
EXECUTE ins (1, 'alice', 10.50);
EXECUTE ins (2, 'bob', 3.25);
EXECUTE ins (3, 'alice', 1.00);
DEALLOCATE ins;

-- A committed transaction and a rolled-back one.
BEGIN;
INSERT INTO ps_orders VALUES (4, 'carol', 7);
UPDATE ps_orders SET amount = amount + 1 WHERE id = 2;
COMMIT;
BEGIN;
INSERT INTO ps_orders VALUES (5, 'dave', 100);
ROLLBACK;

SELECT customer, total, n FROM ps_totals ORDER BY customer;

-- COPY in and out.
COPY ps_orders FROM STDIN;
6	erin	2.50
7	alice	0.50
\.
COPY (SELECT customer, total, n FROM ps_totals ORDER BY customer) TO STDOUT WITH (FORMAT csv);

-- SUBSCRIBE through a cursor sees a change committed by another connection.
BEGIN;
DECLARE c CURSOR FOR SUBSCRIBE ps_totals WITH (SNAPSHOT = false);
\! psql -X -q -c "INSERT INTO ps_orders VALUES (8, 'bob', 1.00)"
FETCH ALL c WITH (timeout = '10s');
ROLLBACK;

-- An error leaves the session usable.
SELECT 1/0;
SELECT count(*) FROM ps_orders;

-- The catalog as psql describes it.
\dt
\dm
\d ps_orders
\d+ ps_totals
\dn
