-- SQL functions outside public: CREATE FUNCTION s.f, calls resolved
-- through search_path (an earlier schema's overload of the same argument
-- types hides a later one's), qualified calls, views calling them
-- maintained under changes, pg_proc's namespace, DROP FUNCTION s.f and
-- DROP SCHEMA with functions in it.

CREATE SCHEMA s;
CREATE SCHEMA q;
CREATE TABLE t (k int, a int);
INSERT INTO t VALUES (1, 10), (2, NULL), (3, -4), (3, -4);

CREATE FUNCTION s.f(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x + 100';
CREATE FUNCTION f(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x + 1';
CREATE FUNCTION q.f(x text) RETURNS text LANGUAGE SQL IMMUTABLE AS $$ SELECT 'q ' || x $$;
CREATE FUNCTION s.g(x int) RETURNS int LANGUAGE SQL IMMUTABLE STRICT AS 'SELECT f(x) * 2';
CREATE FUNCTION public.h(x int) RETURNS int LANGUAGE SQL IMMUTABLE RETURN x * 3;
--! error 3F000
CREATE FUNCTION nosuch.f(x int) RETURNS int LANGUAGE SQL AS 'SELECT x';
--! error 42723
CREATE FUNCTION s.f(x int) RETURNS int LANGUAGE SQL AS 'SELECT x';

SELECT k, f(a), s.f(a), public.f(a), q.f('y'), s.g(a), h(k) FROM t ORDER BY k;
--! error 42883
SELECT g(1);
--! error 42883
SELECT q.f(1);

SET search_path TO s, public;
SELECT k, f(a), g(a), public.f(a) FROM t ORDER BY k;
-- Created in the first schema of the path.
CREATE FUNCTION made_in_s(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x - 1';
SELECT s.made_in_s(5);
SET search_path TO q, s, public;
-- q.f(text) does not hide s.f(int): different argument types.
SELECT f(1), f('z');
SET search_path TO public;
--! error 42883
SELECT made_in_s(5);

SELECT p.proname, n.nspname, pg_get_function_arguments(p.oid), pg_function_is_visible(p.oid)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname IN ('s', 'q', 'public') ORDER BY 2, 1, 3;

-- Views over functions of other schemas, maintained. A body's unqualified
-- names resolve through the caller's search path (PostgreSQL at each
-- call, a view when it is created): each view is read under the path it
-- was created in.
CREATE MATERIALIZED VIEW mv AS SELECT k, s.f(a) AS sf, s.g(a) AS sg, q.f(k::text) AS qf FROM t;
SET search_path TO s, public;
CREATE MATERIALIZED VIEW mv2 AS SELECT k, f(a) AS fa, g(k) AS gk FROM t;
CREATE VIEW v2 AS SELECT k, f(k) AS fk FROM t;
INSERT INTO t VALUES (4, 7), (5, NULL);
UPDATE t SET a = a + 1 WHERE k = 1;
DELETE FROM t WHERE k = 3;
SELECT * FROM mv2 ORDER BY k;
SELECT * FROM v2 ORDER BY k;
SET search_path TO public;
SELECT * FROM mv ORDER BY k;
SELECT * FROM s.v2 ORDER BY k;
--! error 42P01
SELECT * FROM mv2;

-- DROP FUNCTION: qualified, through the path, and its dependents.
--! error 2BP01
DROP FUNCTION s.f(int);
--! error 42883
DROP FUNCTION s.h(int);
--! error 3F000
DROP FUNCTION nosuch.f(int);
DROP FUNCTION IF EXISTS nosuch.f(int);
DROP FUNCTION IF EXISTS s.nosuch(int);
SET search_path TO s, public;
DROP FUNCTION made_in_s(int);
--! error 42883
SELECT s.made_in_s(1);
SET search_path TO public;
--! error 2BP01
DROP FUNCTION q.f;
--! error 2BP01
DROP SCHEMA s;
DROP SCHEMA s CASCADE;
--! error 42P01
SELECT * FROM mv;
DROP FUNCTION q.f;
SELECT f(1);
--! error 3F000
SELECT s.f(1);
SELECT p.proname, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname IN ('s', 'q', 'public') ORDER BY 2, 1;

-- ALTER FUNCTION ... SET SCHEMA of a function nothing calls.
CREATE SCHEMA r;
CREATE FUNCTION r.m(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x * 7';
ALTER FUNCTION r.m(int) SET SCHEMA public;
SELECT m(2);
--! error 42883
SELECT r.m(2);
ALTER FUNCTION m SET SCHEMA r;
SELECT r.m(3);
ALTER FUNCTION r.m(int) SET SCHEMA r;
--! error 3F000
ALTER FUNCTION r.m(int) SET SCHEMA nosuch;
--! error 42883
ALTER FUNCTION r.nosuch(int) SET SCHEMA public;
CREATE FUNCTION public.m(x int) RETURNS int LANGUAGE SQL IMMUTABLE AS 'SELECT x';
--! error 42723
ALTER FUNCTION r.m(int) SET SCHEMA public;
SELECT p.proname, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE p.proname = 'm' ORDER BY 2;
-- A function something calls stays where it is; its callers move.
CREATE VIEW calls_m AS SELECT r.m(k) FROM t;
--! rockstream-error 0A000
ALTER FUNCTION r.m(int) SET SCHEMA q;
ALTER TABLE t SET SCHEMA r;
ALTER VIEW calls_m SET SCHEMA r;
SELECT * FROM r.calls_m ORDER BY 1;
