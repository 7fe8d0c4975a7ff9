-- Reads by key: SELECTs, UPDATEs and DELETEs whose WHERE fixes the
-- leading columns of a relation's key order with = or IN and bounds the
-- next one with <, <=, >, >= or BETWEEN read only those key ranges. They
-- must find exactly the rows PostgreSQL finds: comparisons across integer
-- widths and with numerics (12.0 matches 12, 12.5 nothing), constants
-- beyond a column's range, NULLs, equal numerics written at different
-- scales, parameters, joins and grouped views.

CREATE TABLE acc (id bigint PRIMARY KEY, branch int, balance numeric(12,2), note text);
CREATE TABLE ev (day int, seq smallint, amount numeric, tag text);
CREATE MATERIALIZED VIEW by_day AS SELECT day, tag, count(*) AS n, sum(amount) AS total FROM ev GROUP BY day, tag;
CREATE MATERIALIZED VIEW by_branch AS SELECT branch, count(*) AS n, sum(balance) AS total FROM acc GROUP BY branch;
CREATE MATERIALIZED VIEW rich AS SELECT balance, id, note FROM acc WHERE balance > 0;

INSERT INTO acc VALUES (1, 1, 10.00, 'a'), (2, 1, 20.50, NULL), (3, 2, -5.25, 'c'), (12, 2, 0, 'd'),
  (13, 3, 1.5, 'e'), (3000000000, 3, 1.50, 'big'), (-3000000000, NULL, NULL, 'neg'),
  (9223372036854775807, 1, 7, 'max'), (-9223372036854775808, 1, 7, 'min');
INSERT INTO ev VALUES (1, 1, 1, 'x'), (1, 2, 1.0, 'x'), (1, 3, 1.00, 'y'), (2, 1, 2.5, NULL), (2, 1, 2.5, NULL),
  (NULL, 1, 3, 'x'), (3, NULL, NULL, 'z'), (3, -32768, 4, 'z'), (3, 32767, 5, 'x'), (-2147483648, 1, 6, 'w'),
  (2147483647, 2, 7, 'w');

-- Points and ranges on a bigint primary key.
SELECT * FROM acc WHERE id = 12;
SELECT * FROM acc WHERE id = 12::smallint;
SELECT * FROM acc WHERE id = 12.0;
SELECT * FROM acc WHERE id = 12.5;
SELECT * FROM acc WHERE id = 12.5::float8;
SELECT * FROM acc WHERE id = NULL;
SELECT * FROM acc WHERE id IN (1, 12.0, 13.5, NULL, 3000000000);
SELECT * FROM acc WHERE id < 12.5;
SELECT * FROM acc WHERE id > 12.5;
SELECT * FROM acc WHERE id >= 12.5 AND id <= 3000000000.0;
SELECT * FROM acc WHERE id BETWEEN 2 AND 13;
SELECT * FROM acc WHERE id BETWEEN 13 AND 2;
SELECT * FROM acc WHERE 3 > id AND note IS NOT NULL;
SELECT * FROM acc WHERE id > 9223372036854775806;
SELECT * FROM acc WHERE id >= 9223372036854775808;
SELECT * FROM acc WHERE id < 9223372036854775808;
SELECT * FROM acc WHERE id <= -9223372036854775809;
SELECT * FROM acc WHERE id > -9223372036854775809 AND id < -2999999999.5;
SELECT * FROM acc WHERE id < 'Infinity'::numeric AND id > 2;
SELECT * FROM acc WHERE id = 'NaN'::numeric;
SELECT * FROM acc WHERE id < 'NaN'::numeric AND id < 3;

-- A table without a primary key is ordered by its whole row: day, then
-- seq, then the rest.
SELECT * FROM ev WHERE day = 1;
SELECT * FROM ev WHERE day = 1 AND seq = 2;
SELECT * FROM ev WHERE day = 1 AND seq > 1;
SELECT * FROM ev WHERE day IN (1, 3) AND seq IN (1, 32767, 40000);
SELECT * FROM ev WHERE day = 3 AND seq < -32768;
SELECT * FROM ev WHERE day = 3 AND seq <= -32768;
SELECT * FROM ev WHERE day = 3 AND seq IS NULL;
SELECT * FROM ev WHERE day = 2147483648;
SELECT * FROM ev WHERE day < 2147483648 AND day > 2;
SELECT * FROM ev WHERE day >= -2147483649 AND day < 1.5;
SELECT * FROM ev WHERE day = 2 AND seq = 1 AND amount = 2.50;
SELECT * FROM ev WHERE day = 1.0 AND seq = 1.0::float8;
SELECT * FROM ev WHERE day = 3::float4;

-- Materialized views are ordered by their rows.
SELECT * FROM by_day WHERE day = 1;
SELECT * FROM by_day WHERE day = 1 AND tag = 'x';
SELECT * FROM by_day WHERE day = 2 AND tag IS NULL;
SELECT * FROM by_day WHERE day BETWEEN 1 AND 3 AND tag >= 'x';
SELECT * FROM by_branch WHERE branch IN (1, 3);
SELECT * FROM by_branch WHERE branch = 1.0;
SELECT * FROM by_branch WHERE branch > 1;
SELECT * FROM rich WHERE balance = 1.5;
SELECT * FROM rich WHERE balance = 1.500 AND id > 13;
SELECT * FROM rich WHERE balance > 1 AND balance < 10.00;
SELECT * FROM rich WHERE balance = 7;

-- Joins with one side fixed by constants.
SELECT a.id, a.note, b.n FROM acc a JOIN by_branch b ON a.branch = b.branch WHERE a.id = 2;
SELECT a.id, b.branch, b.total FROM acc a JOIN by_branch b ON a.branch = b.branch WHERE b.branch = 2;
SELECT a.id, e.seq FROM acc a JOIN ev e ON e.day = a.branch WHERE a.id IN (1, 3) AND e.day = 1;
SELECT x.id, y.id FROM acc x, acc y WHERE x.id = 1 AND y.id BETWEEN 12 AND 13;
SELECT a.id, b.n FROM acc a LEFT JOIN by_branch b ON a.branch = b.branch AND b.branch < 2 WHERE a.id < 13;

-- Parameters, the shape of a point read by key.
PREPARE point (bigint) AS SELECT balance FROM acc WHERE id = $1;
EXECUTE point (12);
EXECUTE point (3000000000);
EXECUTE point (99);
PREPARE span (int, int) AS SELECT * FROM ev WHERE day = $1 AND seq >= $2;
EXECUTE span (1, 2);
EXECUTE span (3, -40000);

-- Writes by key, and the views they maintain.
UPDATE acc SET balance = balance + 1 WHERE id = 12;
UPDATE acc SET note = 'n' WHERE id = 12.0;
UPDATE acc SET note = 'none' WHERE id = 12.5;
UPDATE acc SET balance = 0 WHERE id IN (1, 2) AND balance > 15;
DELETE FROM acc WHERE id > 3000000000 - 1 AND id < 3000000000.5;
DELETE FROM ev WHERE day = 1 AND seq BETWEEN 2 AND 3;
UPDATE ev SET amount = 9 WHERE day = 2 AND seq = 1;
DELETE FROM ev WHERE day = NULL;
PREPARE del (int) AS DELETE FROM ev WHERE day = $1 AND seq < 0;
EXECUTE del (3);
SELECT * FROM acc ORDER BY id;
SELECT * FROM ev ORDER BY day, seq, amount;
SELECT * FROM by_day WHERE day = 1;
SELECT * FROM by_day WHERE day >= 2;
SELECT * FROM by_branch WHERE branch = 2;
SELECT * FROM rich WHERE balance >= 1;
