-- SQL-level prepared statements: PREPARE with declared and inferred
-- parameter types, EXECUTE with constant expressions as values (cast to
-- the parameter's type), writes through prepared statements maintaining
-- views, inside and outside transaction blocks, and the errors for
-- unknown, duplicate and wrongly called statements.

CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2));
CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer;

PREPARE ins (int, text, numeric) AS INSERT INTO orders VALUES ($1, $2, $3);
EXECUTE ins (1, 'alice', 10.50);
EXECUTE ins (2, 'b' || 'ob', 1 + 2.25);
EXECUTE ins (3, 'alice', '1');
PREPARE bump AS UPDATE orders SET amount = amount + $1 WHERE id = $2;
EXECUTE bump (1, 2);
PREPARE q AS SELECT customer, amount FROM orders WHERE id = $1;
EXECUTE q (2);
PREPARE q2 (bigint) AS SELECT count(*) FROM orders WHERE id <= $1;
EXECUTE q2 (2);

BEGIN;
EXECUTE ins (4, 'carol', 7);
EXECUTE bump (-1, 1);
COMMIT;
BEGIN;
EXECUTE ins (5, 'dave', 100);
ROLLBACK;

--! error 42601
EXECUTE q (1, 2);
--! error 26000
EXECUTE nope (1);
--! error 42P05
PREPARE ins AS SELECT 1;
--! error 23505
EXECUTE ins (1, 'dup', 0);
DEALLOCATE q;
--! error 26000
EXECUTE q (2);
DEALLOCATE ALL;
--! error 26000
EXECUTE ins (6, 'erin', 1);
