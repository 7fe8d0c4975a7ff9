-- ALTER TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE ... SET SCHEMA: a
-- table moves with its primary key's index and its indexes, the views
-- reading it keep reading it (and are maintained) under its new name,
-- the catalogs show the new schema, and the errors are PostgreSQL's.

CREATE SCHEMA a;
CREATE SCHEMA b;
CREATE TABLE t (k int PRIMARY KEY, v int, w text);
CREATE INDEX t_v ON t (v);
CREATE UNIQUE INDEX t_w ON t (w);
INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y'), (3, NULL, 'z');
CREATE VIEW pv AS SELECT k, v FROM t WHERE v IS NOT NULL;
CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n, sum(v) AS s FROM t;
CREATE MATERIALIZED VIEW mk AS SELECT k, w FROM t;

ALTER TABLE t SET SCHEMA a;
--! error 42P01
SELECT * FROM t;
SELECT * FROM a.t ORDER BY k;
SELECT * FROM pv ORDER BY k;
SELECT * FROM mv;
SELECT c.relname, n.nspname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname IN ('public', 'a', 'b') AND c.relname NOT IN ('mv', 'mk') ORDER BY 2, 1;
SELECT schemaname, tablename, indexname FROM pg_indexes WHERE schemaname IN ('public', 'a', 'b') ORDER BY 1, 3;
SELECT table_schema, table_name, table_type FROM information_schema.tables
  WHERE table_schema IN ('public', 'a', 'b') AND table_name NOT IN ('mv', 'mk') ORDER BY 1, 2;
SELECT table_schema, table_name, column_name, ordinal_position FROM information_schema.columns
  WHERE table_schema IN ('public', 'a', 'b') AND table_name NOT IN ('mv', 'mk') ORDER BY 1, 2, 4;
SELECT 'a.t'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 't');

-- The views are maintained through the moved table, its keys and
-- unique index still checked.
INSERT INTO a.t VALUES (4, 40, 'w');
UPDATE a.t SET v = v + 1 WHERE k = 1;
DELETE FROM a.t WHERE k = 2;
--! error 23505
INSERT INTO a.t VALUES (4, 0, 'q');
--! error 23505
INSERT INTO a.t VALUES (5, 0, 'x');
SELECT * FROM pv ORDER BY k;
SELECT * FROM mv;
SELECT * FROM mk ORDER BY k;
SELECT k FROM a.t WHERE v = 41;

-- A view and a materialized view move, their readers with them.
CREATE VIEW over_pv AS SELECT count(*) AS c FROM pv;
ALTER VIEW pv SET SCHEMA b;
-- (ALTER MATERIALIZED VIEW's tag is not PostgreSQL's for the view the
-- oracle gives it: runtime tests cover it.)
ALTER TABLE mk SET SCHEMA b;
--! error 42P01
SELECT * FROM pv;
SELECT * FROM b.pv ORDER BY k;
SELECT * FROM over_pv;
SELECT k, w FROM b.mk WHERE w = 'w';
SELECT schemaname, tablename, indexname FROM pg_indexes WHERE schemaname IN ('public', 'a', 'b') ORDER BY 1, 3;
-- ALTER TABLE moves any relation, as in PostgreSQL (which the oracle
-- gives views in place of materialized views).
ALTER TABLE mv SET SCHEMA b;
ALTER TABLE b.mv SET SCHEMA public;
ALTER TABLE over_pv SET SCHEMA a;
INSERT INTO a.t VALUES (6, 60, 'v');
SELECT * FROM mv;
SELECT * FROM a.over_pv;
SELECT * FROM b.mk ORDER BY k;

-- Back to public; the search path finds it again.
ALTER TABLE a.t SET SCHEMA public;
SELECT * FROM t ORDER BY k;
SET search_path TO a, public;
ALTER TABLE t SET SCHEMA a;
SELECT count(*) FROM t;
ALTER TABLE t SET SCHEMA a;
RESET search_path;
SELECT c.relname, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname IN ('public', 'a', 'b') AND c.relname NOT IN ('mv', 'mk') ORDER BY 2, 1;

-- Errors, in PostgreSQL's order.
--! error 42P01
ALTER TABLE nosuch SET SCHEMA b;
ALTER TABLE IF EXISTS nosuch SET SCHEMA b;
--! error 42P01
ALTER TABLE a.nosuch SET SCHEMA b;
ALTER TABLE IF EXISTS a.nosuch SET SCHEMA b;
--! error 3F000
ALTER TABLE nosuch.t SET SCHEMA b;
ALTER TABLE IF EXISTS nosuch.t SET SCHEMA b;
--! error 42P01
ALTER TABLE t SET SCHEMA b;
--! error 3F000
ALTER TABLE a.t SET SCHEMA nosuch;
--! error 42809
ALTER VIEW a.t SET SCHEMA b;
--! error 42809
ALTER VIEW IF EXISTS a.t SET SCHEMA b;
--! error 42809
ALTER MATERIALIZED VIEW a.t SET SCHEMA b;
--! rockstream-error 42809
ALTER VIEW mv SET SCHEMA b;
--! error 42809
ALTER MATERIALIZED VIEW b.pv SET SCHEMA a;
--! error 42809
ALTER SEQUENCE a.t SET SCHEMA b;
--! error 42P01
ALTER SEQUENCE nosuch SET SCHEMA b;
ALTER SEQUENCE IF EXISTS nosuch SET SCHEMA b;
--! error 42809
ALTER TABLE a.t_v SET SCHEMA b;
--! error 42809
ALTER VIEW a.t_v SET SCHEMA b;
--! error 42601
ALTER INDEX a.t_v SET SCHEMA b;
--! error 3F000
ALTER TABLE IF EXISTS a.t SET SCHEMA nosuch;
-- A name of the table's, its key's or an index's taken in the target.
CREATE TABLE b.t (x int);
--! error 42P07
ALTER TABLE a.t SET SCHEMA b;
DROP TABLE b.t;
CREATE TABLE b.t_pkey (x int);
--! error 42P07
ALTER TABLE a.t SET SCHEMA b;
DROP TABLE b.t_pkey;
CREATE VIEW b.t_w AS SELECT 1 AS one;
--! error 42P07
ALTER TABLE a.t SET SCHEMA b;
DROP VIEW b.t_w;
-- System schemas hold no user relations here.
--! rockstream-error 0A000
ALTER TABLE a.t SET SCHEMA pg_catalog;
ALTER TABLE a.t SET SCHEMA b;
SELECT * FROM b.t ORDER BY k;
SELECT schemaname, tablename, indexname FROM pg_indexes WHERE schemaname IN ('public', 'a', 'b') ORDER BY 1, 3;

-- The old schema can go once it is empty; DROP SCHEMA ... CASCADE drops
-- what moved into a schema.
DROP VIEW a.over_pv;
DROP SCHEMA a;
INSERT INTO b.t VALUES (7, 70, 'u');
SELECT * FROM mv;
DROP SCHEMA b CASCADE;
SELECT c.relname, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname IN ('public', 'a', 'b') AND c.relname NOT IN ('mv', 'mk') ORDER BY 2, 1;
