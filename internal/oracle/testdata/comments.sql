-- COMMENT ON TABLE, VIEW, MATERIALIZED VIEW and COLUMN: obj_description,
-- col_description and pg_description show them; NULL or '' removes one; a
-- comment commits and rolls back with its transaction and goes with its
-- relation.

CREATE TABLE t (id int PRIMARY KEY, name text, v numeric);
CREATE VIEW tv AS SELECT id, name FROM t;
CREATE MATERIALIZED VIEW tm AS SELECT name, count(*) AS n FROM t GROUP BY name;

COMMENT ON TABLE t IS 'the table';
COMMENT ON COLUMN t.name IS 'who';
COMMENT ON COLUMN public.t.v IS 'how much';
COMMENT ON VIEW tv IS 'a view';
--! postgres COMMENT ON VIEW tm IS 'maintained'
COMMENT ON MATERIALIZED VIEW tm IS 'maintained';
COMMENT ON COLUMN tm.n IS 'rows per name';
COMMENT ON COLUMN tv.id IS 'view column';

SELECT obj_description('t'::regclass, 'pg_class'), obj_description('tv'::regclass, 'pg_class'),
       obj_description('tm'::regclass), obj_description('t'::regclass, 'pg_type');
SELECT col_description('t'::regclass, 1), col_description('t'::regclass, 2), col_description('t'::regclass, 3),
       col_description('tm'::regclass, 2), col_description('t'::regclass, 0), col_description('t'::regclass, 9);
SELECT c.relname, d.objsubid, d.description
  FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND d.classoid = 'pg_class'::regclass
  ORDER BY 1, 2;

-- Replacing and removing.
COMMENT ON TABLE t IS 'the table, again';
COMMENT ON COLUMN t.name IS NULL;
COMMENT ON COLUMN t.v IS '';
COMMENT ON VIEW tv IS NULL;
SELECT obj_description('t'::regclass, 'pg_class'), obj_description('tv'::regclass, 'pg_class'),
       col_description('t'::regclass, 2), col_description('t'::regclass, 3);

-- With the transaction around it.
BEGIN;
COMMENT ON TABLE t IS 'in a block';
SELECT obj_description('t'::regclass, 'pg_class');
ROLLBACK;
SELECT obj_description('t'::regclass, 'pg_class');
BEGIN;
COMMENT ON COLUMN t.id IS 'the key';
COMMIT;
SELECT col_description('t'::regclass, 1);

-- Dropped with the relation: a new relation of the same name has none.
DROP MATERIALIZED VIEW tm;
CREATE MATERIALIZED VIEW tm AS SELECT name, count(*) AS n FROM t GROUP BY name;
SELECT obj_description('tm'::regclass, 'pg_class'), col_description('tm'::regclass, 2);

--! error 42P01
COMMENT ON TABLE nope IS 'x';
--! error 42809
COMMENT ON TABLE tv IS 'x';
--! error 42809
COMMENT ON VIEW t IS 'x';
--! error 42809
COMMENT ON MATERIALIZED VIEW t IS 'x';
--! error 42703
COMMENT ON COLUMN t.nope IS 'x';
--! error 42P01
COMMENT ON COLUMN nope.id IS 'x';
BEGIN READ ONLY;
--! error 25006
COMMENT ON TABLE t IS 'x';
ROLLBACK;
