-- UNIQUE constraints (CREATE TABLE column and table constraints, ALTER
-- TABLE ADD/DROP CONSTRAINT) and INSERT ... ON CONFLICT with a unique
-- index or constraint as the arbiter: names as PostgreSQL chooses them,
-- the catalog rows, DO NOTHING and DO UPDATE (EXCLUDED, WHERE,
-- RETURNING), ON CONSTRAINT, the inference rules (42P10 when nothing
-- matches) and 21000 for a row updated twice. A view over the table
-- follows every statement that succeeds.

CREATE TABLE t (id int PRIMARY KEY, a int UNIQUE, b int, c int, UNIQUE (b, c), CONSTRAINT named_u UNIQUE NULLS NOT DISTINCT (c));
CREATE TABLE t_a_key1 (x int);
CREATE TABLE t3 (a int UNIQUE UNIQUE, b int);
CREATE TABLE t4 (a int PRIMARY KEY UNIQUE, b int UNIQUE);
--! error 42P07
CREATE TABLE t2 (a int UNIQUE, b int, CONSTRAINT t2_a_key UNIQUE (b));
--! error 42703
CREATE TABLE t5 (a int, UNIQUE (z));
--! error 42701
CREATE TABLE t5 (a int, UNIQUE (a, a));
CREATE MATERIALIZED VIEW t_sum AS SELECT count(*) AS n, sum(a) AS sa, sum(b) AS sb, sum(c) AS sc FROM t;
SELECT conname, contype, conkey FROM pg_constraint WHERE conrelid = 't'::regclass ORDER BY conname;
SELECT conname, contype, conkey FROM pg_constraint WHERE conrelid IN ('t3'::regclass, 't4'::regclass) ORDER BY conname;
SELECT c.conname, i.relname FROM pg_constraint c JOIN pg_class i ON i.oid = c.conindid WHERE c.conrelid = 't'::regclass ORDER BY 1;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 't'::regclass ORDER BY conname;
SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('t', 't3', 't4') ORDER BY indexname;
SELECT c.relname, i.indisunique, i.indisprimary, i.indnullsnotdistinct FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indrelid = 't'::regclass ORDER BY c.relname;
SELECT constraint_name, constraint_type, nulls_distinct FROM information_schema.table_constraints WHERE table_name = 't' AND constraint_type <> 'CHECK' ORDER BY 1;
SELECT constraint_name, column_name, ordinal_position FROM information_schema.key_column_usage WHERE table_name = 't' ORDER BY 1, 3;

-- The constraints hold on every write.
INSERT INTO t VALUES (1, 1, 1, 1), (2, 2, 2, 2), (3, NULL, NULL, NULL);
--! error 23505
INSERT INTO t VALUES (4, 1, 4, 4);
--! error 23505
INSERT INTO t VALUES (4, 4, 1, 1);
--! error 23505
INSERT INTO t VALUES (4, 4, 4, NULL);
INSERT INTO t VALUES (4, NULL, 2, 4);
--! error 23505
UPDATE t SET a = 2 WHERE id = 1;
SELECT * FROM t ORDER BY id;

-- DROP INDEX of a constraint's index is refused; DROP CONSTRAINT drops it.
--! error 2BP01
DROP INDEX t_a_key;
--! error 42704
ALTER TABLE t DROP CONSTRAINT nope;
ALTER TABLE t DROP CONSTRAINT IF EXISTS nope;
ALTER TABLE t DROP CONSTRAINT named_u;
INSERT INTO t VALUES (5, 5, 5, NULL);
SELECT conname FROM pg_constraint WHERE conrelid = 't'::regclass ORDER BY conname;

-- ALTER TABLE ... ADD builds over the rows and fails on duplicates.
--! error 23505
ALTER TABLE t ADD CONSTRAINT c_key UNIQUE NULLS NOT DISTINCT (c);
ALTER TABLE t ADD CONSTRAINT c_key UNIQUE (c);
ALTER TABLE t ADD UNIQUE (a);
--! error 42P07
ALTER TABLE t ADD CONSTRAINT c_key UNIQUE (b);
--! error 42P07
ALTER TABLE t ADD CONSTRAINT t_pkey UNIQUE (b);
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 't'::regclass ORDER BY conname;
--! error 23505
INSERT INTO t VALUES (6, 6, 6, 1);
--! error 42704
ALTER TABLE t DROP CONSTRAINT t_a_key1;
ALTER TABLE t DROP CONSTRAINT t_a_key2;

-- ON CONFLICT on a unique constraint.
INSERT INTO t VALUES (10, 1, 10, 10) ON CONFLICT (a) DO NOTHING;
INSERT INTO t VALUES (10, 1, 10, 10) ON CONFLICT (a) DO UPDATE SET b = excluded.b + 100 RETURNING *;
INSERT INTO t VALUES (11, 2, 11, 11), (12, 12, 12, 12) ON CONFLICT (a) DO UPDATE SET c = excluded.c RETURNING id, a, c;
INSERT INTO t VALUES (13, 12, 0, 0) ON CONFLICT (a) DO UPDATE SET b = excluded.b WHERE t.b > 100;
INSERT INTO t VALUES (13, 1, 0, 0) ON CONFLICT (a) DO UPDATE SET b = t.b + 1 WHERE t.b > 100 RETURNING *;
INSERT INTO t AS x VALUES (14, 2, 0, 0) ON CONFLICT ON CONSTRAINT t_a_key DO UPDATE SET b = x.b * 2 RETURNING *;
INSERT INTO t VALUES (1, 99, 99, 99) ON CONFLICT ON CONSTRAINT t_pkey DO NOTHING;
INSERT INTO t VALUES (15, 1, 99, 99), (16, 16, 16, 16) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO t VALUES (17, 17, 17, 17), (18, 17, 18, 18) ON CONFLICT (a) DO NOTHING RETURNING *;
--! error 23505
INSERT INTO t VALUES (19, 1, 5, 5) ON CONFLICT (c, b) DO NOTHING;
INSERT INTO t VALUES (19, 19, 5, 5) ON CONFLICT (c, b) DO NOTHING;
INSERT INTO t VALUES (20, 20, 5, 5) ON CONFLICT (b, c) DO UPDATE SET a = excluded.a RETURNING *;
INSERT INTO t VALUES (21, NULL, 21, 21), (22, NULL, 22, 22) ON CONFLICT (a) DO UPDATE SET b = 0 RETURNING *;
INSERT INTO t VALUES (23, 23, 23, 23) ON CONFLICT (a) WHERE a > 0 DO NOTHING;
SELECT * FROM t ORDER BY id;
SELECT * FROM t_sum;

-- 21000: a row proposed twice for DO UPDATE.
--! error 21000
INSERT INTO t VALUES (30, 30, 30, 30), (31, 30, 31, 31) ON CONFLICT (a) DO UPDATE SET b = excluded.b;
--! error 21000
INSERT INTO t VALUES (32, 1, 0, 32), (33, 1, 0, 33) ON CONFLICT (a) DO UPDATE SET b = excluded.b;
-- A conflict on another unique key than the arbiter still fails.
--! error 23505
INSERT INTO t VALUES (1, 40, 40, 40) ON CONFLICT (a) DO NOTHING;
--! error 23505
INSERT INTO t VALUES (40, 1, 40, 40) ON CONFLICT (id) DO NOTHING;
INSERT INTO t VALUES (40, 1, 40, 40) ON CONFLICT (a) DO UPDATE SET c = 2;
--! error 23505
INSERT INTO t VALUES (40, 1, 40, 40) ON CONFLICT (a) DO UPDATE SET c = 11;
-- Inference: no matching key, a missing constraint, a missing target.
--! error 42P10
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT (b) DO NOTHING;
--! error 42P10
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT (a, b) DO NOTHING;
--! error 42P10
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT ((a + 1)) DO NOTHING;
--! error 42704
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT ON CONSTRAINT nope DO NOTHING;
--! error 42601
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT DO UPDATE SET b = 1;
--! error 42703
INSERT INTO t VALUES (41, 41, 41, 41) ON CONFLICT (zz) DO NOTHING;
SELECT * FROM t ORDER BY id;
SELECT * FROM t_sum;

-- A table without a primary key; a unique index (not a constraint) is an
-- arbiter by its columns, not by name.
CREATE TABLE n (a int, b text, v int);
INSERT INTO n VALUES (1, 'x', 1) ON CONFLICT DO NOTHING;
--! error 42P10
INSERT INTO n VALUES (1, 'x', 1) ON CONFLICT (a) DO NOTHING;
CREATE UNIQUE INDEX n_a ON n (a);
--! error 42704
INSERT INTO n VALUES (1, 'y', 2) ON CONFLICT ON CONSTRAINT n_a DO NOTHING;
INSERT INTO n VALUES (1, 'y', 2) ON CONFLICT (a) DO UPDATE SET v = n.v + excluded.v, b = excluded.b RETURNING *;
INSERT INTO n VALUES (1, 'z', 5), (2, 'w', 1) ON CONFLICT (a) DO UPDATE SET a = n.a + 10 RETURNING *;
INSERT INTO n VALUES (1, 'q', 0) ON CONFLICT (a) DO NOTHING RETURNING *;
ALTER TABLE n ADD UNIQUE (b);
INSERT INTO n VALUES (3, 'w', 3) ON CONFLICT (b) DO UPDATE SET v = excluded.v RETURNING *;
--! error 23505
INSERT INTO n VALUES (2, 'new', 0) ON CONFLICT (b) DO NOTHING;
INSERT INTO n VALUES (NULL, NULL, 7), (NULL, NULL, 8) ON CONFLICT (b) DO NOTHING;
SELECT * FROM n ORDER BY a, v;

-- In a transaction block: the block's earlier rows are conflicts, and a
-- rolled-back constraint is gone.
BEGIN;
INSERT INTO n VALUES (50, 'txn', 1);
INSERT INTO n VALUES (51, 'txn', 2) ON CONFLICT (b) DO UPDATE SET v = 99;
COMMIT;
SELECT * FROM n WHERE b = 'txn';
BEGIN;
ALTER TABLE n ADD CONSTRAINT n_a_key UNIQUE (a);
ROLLBACK;
SELECT conname FROM pg_constraint WHERE conrelid = 'n'::regclass ORDER BY conname;
INSERT INTO n VALUES (60, 'v99', 99);
DROP TABLE n;
SELECT count(*) FROM pg_constraint WHERE conname LIKE 'n\_%';

-- Constraints follow ALTER TABLE: a retyped or renamed column keeps its
-- constraint, a dropped one drops it; a schema's tables have their own.
CREATE TABLE r (id int PRIMARY KEY, a int UNIQUE, b int, CONSTRAINT r_ab UNIQUE (a, b));
INSERT INTO r VALUES (1, 1, 1), (2, 2, 1);
ALTER TABLE r ALTER COLUMN a TYPE bigint;
ALTER TABLE r RENAME COLUMN b TO bb;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'r'::regclass ORDER BY conname;
--! error 23505
INSERT INTO r VALUES (3, 1, 5);
INSERT INTO r VALUES (3, 3, 5) ON CONFLICT (a, bb) DO NOTHING;
INSERT INTO r VALUES (4, 3, 5) ON CONFLICT (a) DO UPDATE SET bb = 6 RETURNING *;
ALTER TABLE r DROP COLUMN bb;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'r'::regclass ORDER BY conname;
CREATE SCHEMA s;
CREATE TABLE s.r (a int UNIQUE, b int);
SELECT n.nspname, c.conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.conrelid IN ('r'::regclass, 's.r'::regclass) ORDER BY 1, 2;
INSERT INTO s.r VALUES (1, 1);
INSERT INTO s.r VALUES (1, 2) ON CONFLICT ON CONSTRAINT r_a_key DO UPDATE SET b = excluded.b;
SELECT * FROM s.r;
-- CREATE TABLE in a transaction block, rolled back with it.
BEGIN;
CREATE TABLE tb (a int UNIQUE);
INSERT INTO tb VALUES (1);
INSERT INTO tb VALUES (1) ON CONFLICT DO NOTHING;
SELECT * FROM tb;
ROLLBACK;
SELECT count(*) FROM pg_constraint WHERE conname = 'tb_a_key';
