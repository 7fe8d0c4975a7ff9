-- Arithmetic on every numeric type: result types and values, integer
-- division and modulo, numeric scale, float output, and the two errors
-- arithmetic raises: 22003 (out of range) and 22012 (division by zero).
-- Inside a materialized view, a change that makes the view's query fail
-- must itself fail with that error and leave every view unchanged.

CREATE TABLE nums (
  id int,
  s smallint,
  i integer,
  b bigint,
  n numeric(12,3),
  r real,
  d double precision
);

INSERT INTO nums VALUES
  (1, 1, 10, 100, 1.5, 0.5, 0.25),
  (2, -3, -7, -9000000000, -2.125, -1.5, 1e10),
  (3, 0, 0, 0, 0, 0, 0),
  (4, NULL, NULL, NULL, NULL, NULL, NULL);

-- One column per operator and type pair. Smallint and integer arithmetic
-- stays in its type; mixing widens (smallint < integer < bigint <
-- numeric < double precision).
CREATE MATERIALIZED VIEW arith AS
SELECT id,
       s + s AS s_plus_s,
       -s AS s_neg,
       s * 2 AS s_times_2,
       s / 2 AS s_div_2,
       s % 3 AS s_mod_3,
       i + 1 AS i_plus_1,
       i - 3 AS i_minus_3,
       i * 2 AS i_times_2,
       i / 3 AS i_div_3,
       i % 3 AS i_mod_3,
       -i AS i_neg,
       b + i AS b_plus_i,
       b * 2 AS b_times_2,
       b / 7 AS b_div_7,
       b % 7 AS b_mod_7,
       s + i + b AS s_i_b,
       n + 1 AS n_plus_1,
       n * n AS n_squared,
       n / 3 AS n_div_3,
       n % 1 AS n_mod_1,
       n + i AS n_plus_i,
       i / 2.0 AS i_div_2_0,
       i * n AS i_times_n,
       -n AS n_neg,
       r * 2 AS r_times_2,
       r + 1 AS r_plus_1,
       d / 4 AS d_div_4,
       d + r AS d_plus_r,
       i + d AS i_plus_d,
       n + 1.25 AS n_plus_literal
FROM nums;

SELECT * FROM arith ORDER BY id;

-- Values near the limits of their types that still fit everywhere.
INSERT INTO nums VALUES (5, 16383, 1073741823, 4611686018427387903, 999999.999, 1.5, 2.5);

-- s + s = 32768 does not fit in smallint.
--! error 22003
INSERT INTO nums VALUES (6, 16384, 0, 0, 0, 0, 0);

-- i + 1 does not fit in integer.
--! error 22003
INSERT INTO nums VALUES (7, 0, 2147483647, 0, 0, 0, 0);

-- The UPDATE itself is fine (b becomes 4611686018427387904), but b * 2
-- in the view does not fit in bigint.
--! error 22003
UPDATE nums SET b = b + 1 WHERE id = 5;

-- The UPDATE's own expression overflows.
--! error 22003
UPDATE nums SET i = i * 4 WHERE id = 5;

-- Too many digits for numeric(12,3).
--! error 22003
INSERT INTO nums (id, n) VALUES (8, 1234567890.5);

-- Assignment to numeric(12,3) rounds half away from zero.
INSERT INTO nums (id, n) VALUES (9, 1.0005), (10, -1.0005), (11, 2.0004);

-- Moving a row to values that still fit.
UPDATE nums SET s = 16383, i = -1073741824 WHERE id = 1;
DELETE FROM nums WHERE id = 5;
UPDATE nums SET b = -4611686018427387904 WHERE id = 2;

SELECT * FROM arith ORDER BY id;

-- Ad-hoc arithmetic and its errors.
SELECT 7 / 2 AS a, -7 / 2 AS b, 7 % -2 AS c, -7 % 2 AS d, 7.0 / 2 AS e, 1 / 3.0 AS f,
       2::numeric / 3 AS g, 10::numeric / 4 AS h, 1.000 / 3 AS i, 100000 / 3.0 AS j,
       0.1 + 0.2 AS k, 0.1::float8 + 0.2::float8 AS l, 1.5::real * 3 AS m,
       9223372036854775807 AS n, -9223372036854775808 AS o, 2147483647 + 1::bigint AS p;
--! error 22003
SELECT 2147483647 + 1;
--! error 22003
SELECT -2147483647 - 2;
--! error 22003
SELECT 32767::smallint + 1::smallint;
--! error 22003
SELECT 9223372036854775807 + 1;
--! error 22003
SELECT 4611686018427387904 * 2;
--! error 22003
SELECT -(-9223372036854775807 - 1);
--! error 22003
SELECT 1e308::float8 * 10;
--! error 22003
SELECT 3e38::real * 10::real;
--! error 22012
SELECT 1 / 0;
--! error 22012
SELECT 1 % 0;
--! error 22012
SELECT 1.5 / 0;
--! error 22012
SELECT 1.5 % 0;
--! error 22012
SELECT 1 / 0::float8;
-- NULL operands make NULL, even with a zero divisor.
SELECT NULL::int / 0 AS a, 1 + NULL AS b, NULL::numeric * 2 AS c;

-- Division by zero inside views.
CREATE TABLE divs (id int, num int, den int, nnum numeric, nden numeric, fden double precision);
INSERT INTO divs VALUES (1, 7, 2, 7, 2, 2), (2, -7, 2, -7.5, 2, 4), (3, 7, -2, 1, 3, -0.5);

CREATE MATERIALIZED VIEW quotients AS
SELECT id, num / den AS q, num % den AS r, nnum / nden AS nq, nnum % nden AS nr, num / fden AS fq
FROM divs;

--! error 22012
INSERT INTO divs VALUES (4, 1, 0, 1, 1, 1);
--! error 22012
INSERT INTO divs VALUES (5, 1, 1, 1, 0, 1);
--! error 22012
INSERT INTO divs VALUES (6, 1, 1, 1, 1, 0);
--! error 22012
UPDATE divs SET den = 0 WHERE id = 2;
-- A NULL dividend with a zero divisor is NULL, not an error.
INSERT INTO divs VALUES (7, NULL, 0, NULL, 0, 0);
-- Several rows in one statement: one bad row fails them all.
--! error 22012
INSERT INTO divs VALUES (8, 1, 1, 1, 1, 1), (9, 1, 0, 1, 1, 1), (10, 2, 2, 2, 2, 2);

-- A WHERE clause keeps zero divisors out of the division.
CREATE MATERIALIZED VIEW safe_quotients AS
SELECT id, num / den AS q FROM divs WHERE den <> 0;
-- So does CASE.
CREATE MATERIALIZED VIEW case_quotients AS
SELECT id, CASE WHEN den = 0 THEN NULL ELSE num / den END AS q FROM divs;

DROP MATERIALIZED VIEW quotients;
INSERT INTO divs VALUES (11, 5, 0, 5, 0, 0), (12, -9, 4, -9, 4, 4);
UPDATE divs SET den = 0 WHERE id = 1;

-- Creating a view over data that makes it fail fails, and creates nothing.
--! error 22012
CREATE MATERIALIZED VIEW bad_quotients AS SELECT id, num / den AS q FROM divs;
--! error 42P01
SELECT * FROM bad_quotients;
DELETE FROM divs WHERE den = 0 AND num IS NOT NULL;
CREATE MATERIALIZED VIEW bad_quotients AS SELECT id, num / den AS q FROM divs;
--! error 22012
INSERT INTO divs VALUES (13, 1, 0, 1, 1, 1);
SELECT * FROM bad_quotients ORDER BY id;
