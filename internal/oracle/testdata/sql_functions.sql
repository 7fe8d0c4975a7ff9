-- CREATE FUNCTION ... LANGUAGE SQL: scalar functions whose body is one
-- expression are inlined where they are called, in ad-hoc queries, DML
-- and views maintained under inserts, updates and deletes, with NULLs
-- (STRICT and not), overloading, named and positional parameters, the
-- SQL-standard body, and DROP FUNCTION with its dependencies.

CREATE TABLE t (k int, a int, b numeric(8,2), s text);
INSERT INTO t VALUES (1, 10, 1.50, 'x'), (2, NULL, 2.25, NULL), (3, -4, NULL, 'yy'), (3, -4, NULL, 'yy');

CREATE FUNCTION add1(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS $$ SELECT x + 1 $$;
CREATE FUNCTION addp(int, int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT $1 + $2';
CREATE FUNCTION scaled(v numeric, f int) RETURNS numeric IMMUTABLE LANGUAGE SQL RETURN v * f;
CREATE FUNCTION greet(s text) RETURNS text STRICT IMMUTABLE LANGUAGE SQL AS $$ SELECT 'hi ' || s $$;
CREATE FUNCTION greet2(s text) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'hi ' || coalesce(s, '?') $$;
CREATE FUNCTION strict_coalesce(a int, b int) RETURNS int STRICT IMMUTABLE LANGUAGE SQL AS 'SELECT coalesce(a, b, -1)';
CREATE FUNCTION nested(x int) RETURNS int IMMUTABLE LANGUAGE SQL AS 'SELECT add1(addp(x, x))';
CREATE FUNCTION qualified(x int) RETURNS int IMMUTABLE LANGUAGE SQL AS 'SELECT qualified.x * 2';
CREATE FUNCTION to_text(x int) RETURNS text IMMUTABLE LANGUAGE SQL AS 'SELECT x';
CREATE FUNCTION sign_word(x int) RETURNS text IMMUTABLE LANGUAGE SQL
  AS $$ SELECT CASE WHEN x > 0 THEN 'pos' WHEN x < 0 THEN 'neg' WHEN x = 0 THEN 'zero' END $$;
CREATE FUNCTION atomic(x int) RETURNS int IMMUTABLE LANGUAGE SQL RETURN x * 10;
-- Overloads by argument types.
CREATE FUNCTION describe(x int) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'int ' || x $$;
CREATE FUNCTION describe(x text) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'text ' || x $$;
CREATE FUNCTION describe(x numeric, y int) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'num ' || x || ' ' || y $$;
-- Default volatility is VOLATILE.
CREATE FUNCTION vol(x int) RETURNS int LANGUAGE SQL AS 'SELECT x * 3';

SELECT k, add1(a), addp(a, k), scaled(b, k), greet(s), greet2(s), strict_coalesce(a, k), nested(a) FROM t ORDER BY k, 2;
SELECT qualified(k), to_text(k), sign_word(a), atomic(k), vol(k) FROM t ORDER BY 1, 2, 3;
SELECT describe(k), describe(s), describe(b, k), describe('lit'), describe(2.5, 1) FROM t ORDER BY 1, 2, 3;
SELECT add1(NULL), greet(NULL), strict_coalesce(NULL, 2), add1('7');
SELECT k, count(*) FROM t GROUP BY k HAVING add1(count(*)::int) > 2 ORDER BY k;
SELECT add1(k) AS a1, sum(a) FROM t GROUP BY add1(k) ORDER BY 1;
SELECT * FROM t WHERE add1(a) > 0 ORDER BY k;
--! error 22003
SELECT add1(2147483647);

-- DML.
INSERT INTO t VALUES (add1(4), addp(1, 2), scaled(1.25, 2), greet('z'));
UPDATE t SET a = add1(a) WHERE k = greatest(add1(0), 1);
DELETE FROM t WHERE sign_word(a) = 'neg' AND k = 5;
SELECT * FROM t ORDER BY k, a;

-- Errors at CREATE: what PostgreSQL refuses, and what the inliner
-- cannot take.
--! error 42P13
CREATE FUNCTION bad_type(x int) RETURNS date LANGUAGE SQL AS 'SELECT x';
--! error 42703
CREATE FUNCTION bad_col(x int) RETURNS int LANGUAGE SQL AS 'SELECT y';
--! error 42P02
CREATE FUNCTION bad_param(x int) RETURNS int LANGUAGE SQL AS 'SELECT $2';
--! error 42723
CREATE FUNCTION add1(x int) RETURNS int LANGUAGE SQL AS 'SELECT x + 2';
--! error 42P13
CREATE OR REPLACE FUNCTION add1(x int) RETURNS text LANGUAGE SQL AS 'SELECT x::text';
--! rockstream-error 0A000
CREATE FUNCTION from_t(x int) RETURNS bigint LANGUAGE SQL AS 'SELECT count(*) FROM t WHERE k = x';
--! rockstream-error 0A000
CREATE FUNCTION two_stmts(x int) RETURNS int LANGUAGE SQL AS 'SELECT 1; SELECT x';
--! rockstream-error 0A000
CREATE FUNCTION setof_f(x int) RETURNS SETOF int LANGUAGE SQL AS 'SELECT x';
--! rockstream-error 0A000
CREATE FUNCTION plpg(x int) RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN x; END';
--! rockstream-error 0A000
CREATE FUNCTION sub_f(x int) RETURNS int LANGUAGE SQL AS 'SELECT (SELECT max(a) FROM t) + x';
--! error 42883
SELECT add1('a'::text);
--! error 42883
SELECT addp(1);

CREATE MATERIALIZED VIEW fv AS
  SELECT k, add1(a) AS a1, scaled(b, k) AS sb, greet(s) AS g, greet2(s) AS g2, nested(a) AS n, describe(s) AS d FROM t;
CREATE MATERIALIZED VIEW fv_group AS
  SELECT sign_word(a) AS w, count(*) AS c, sum(add1(k)) AS s FROM t GROUP BY sign_word(a);
CREATE MATERIALIZED VIEW fv_where AS
  SELECT k, s FROM t WHERE strict_coalesce(a, k) > 2;
CREATE VIEW fv_plain AS SELECT k, atomic(k) AS x, describe(k) AS d FROM t;
-- A VOLATILE function in a materialized view is refused, as random() is.
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW fv_vol AS SELECT vol(k) FROM t;

INSERT INTO t VALUES (7, 0, 0.10, ''), (8, NULL, NULL, NULL);
UPDATE t SET a = a - 20 WHERE k = 1;
UPDATE t SET s = NULL WHERE k = 3;
DELETE FROM t WHERE k = 2;
INSERT INTO t SELECT k + 10, a, b, s FROM t;
DELETE FROM t WHERE a IS NULL;

-- A view depends on the functions it calls.
--! error 2BP01
DROP FUNCTION add1(int);
-- nested calls addp: PostgreSQL does not track a body written as a
-- string, and would let the view break; the inlined view depends on it.
--! rockstream-error 2BP01
DROP FUNCTION addp;
--! error 42725
DROP FUNCTION describe;
--! error 42883
DROP FUNCTION nosuch(int);
DROP FUNCTION IF EXISTS nosuch(int);
DROP FUNCTION IF EXISTS nosuch;
DROP FUNCTION atomic(int) CASCADE;
DROP FUNCTION describe(numeric, integer);
-- A materialized view's rows hold the old body's results: replacing the
-- function is refused while one calls it.
--! rockstream-error 0A000
CREATE OR REPLACE FUNCTION greet2(s text) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'hello ' || coalesce(s, '!') $$;
DROP MATERIALIZED VIEW fv;
CREATE OR REPLACE FUNCTION greet2(s text) RETURNS text IMMUTABLE LANGUAGE SQL AS $$ SELECT 'hello ' || coalesce(s, '!') $$;
SELECT greet2(s) FROM t ORDER BY 1;
DROP FUNCTION nested(int), add1(int) CASCADE;
INSERT INTO t VALUES (9, 9, 9, 'nine');
