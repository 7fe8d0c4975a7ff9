-- UNIQUE indexes (CREATE UNIQUE INDEX): every write path refuses a second
-- row with a key already held, with 23505, checked against the rows
-- committed, the statement's own rows and those a transaction block wrote
-- before; NULLs are distinct unless NULLS NOT DISTINCT; a key freed by an
-- UPDATE or DELETE can be taken again; building one over duplicates fails
-- with 23505; the catalog shows the indexes as PostgreSQL does. A failed
-- statement changes nothing, so the view over the table stays as it was.

CREATE TABLE u (id int PRIMARY KEY, email text, a int, b int);
CREATE MATERIALIZED VIEW u_count AS SELECT count(*) AS n, count(email) AS e, sum(a) AS sa FROM u;
INSERT INTO u VALUES (1, 'a@x', 1, 1), (2, 'b@x', 1, 2), (3, NULL, 2, NULL), (4, NULL, 2, NULL);
CREATE UNIQUE INDEX u_email ON u (email);
CREATE UNIQUE INDEX u_ab ON u (a, b);

--! error 23505
INSERT INTO u VALUES (5, 'a@x', 3, 3);
INSERT INTO u VALUES (5, NULL, 3, 3);
--! error 23505
INSERT INTO u VALUES (6, 'c@x', 1, 2);
INSERT INTO u VALUES (6, 'c@x', 2, NULL);
--! error 23505
INSERT INTO u VALUES (7, 'd@x', 9, 9), (8, 'd@x', 10, 10);
--! error 23505
UPDATE u SET email = 'a@x' WHERE id = 2;
--! error 23505
UPDATE u SET a = 1, b = 1 WHERE id = 5;
UPDATE u SET email = 'z@x' WHERE id = 1;
INSERT INTO u VALUES (7, 'a@x', 7, 7);
DELETE FROM u WHERE id = 7;
INSERT INTO u VALUES (7, 'a@x', 7, 7);
UPDATE u SET b = 5 WHERE id = 6;
SELECT * FROM u;
SELECT * FROM u WHERE email = 'a@x';
SELECT * FROM u WHERE a = 2 AND b IS NULL;

-- ON CONFLICT on the primary key: a row that takes another row's
-- unique key still fails. A unique index is an arbiter too: without a
-- target every unique key is one, and a target naming its columns
-- infers it (unique_constraints.sql has more).
INSERT INTO u VALUES (1, 'q@x', 0, 0) ON CONFLICT (id) DO NOTHING;
INSERT INTO u VALUES (1, 'q@x', 0, 0) ON CONFLICT (id) DO UPDATE SET email = excluded.email;
--! error 23505
INSERT INTO u VALUES (1, 'b@x', 0, 0) ON CONFLICT (id) DO UPDATE SET email = excluded.email;
--! error 23505
INSERT INTO u VALUES (20, 'b@x', 0, 0) ON CONFLICT (id) DO NOTHING;
INSERT INTO u VALUES (20, 'b@x', 0, 0) ON CONFLICT DO NOTHING;
INSERT INTO u VALUES (20, 'b@x', 0, 0) ON CONFLICT (email) DO NOTHING;
INSERT INTO u VALUES (20, 'b@x', 0, 0) ON CONFLICT (email) DO UPDATE SET a = excluded.a + 100 RETURNING *;
SELECT * FROM u;

-- In a transaction block: the block's own earlier rows count, and a
-- row the block deleted frees its key.
BEGIN;
INSERT INTO u VALUES (8, 'e@x', 8, 8);
--! error 23505
INSERT INTO u VALUES (9, 'e@x', 9, 9);
ROLLBACK;
BEGIN;
INSERT INTO u VALUES (8, 'e@x', 8, 8);
DELETE FROM u WHERE id = 8;
INSERT INTO u VALUES (9, 'e@x', 9, 9);
UPDATE u SET email = NULL WHERE id = 9;
INSERT INTO u VALUES (10, 'e@x', 10, 10);
COMMIT;
SELECT * FROM u;

-- Building over duplicates fails; NULLS NOT DISTINCT counts NULLs equal.
CREATE TABLE d (k int, v text);
INSERT INTO d VALUES (1, 'x'), (2, 'y'), (1, 'z'), (NULL, 'n'), (NULL, 'm');
--! error 23505
CREATE UNIQUE INDEX d_k ON d (k);
CREATE UNIQUE INDEX d_v ON d (v);
DELETE FROM d WHERE v = 'z';
--! error 23505
CREATE UNIQUE INDEX d_kn ON d (k) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX d_k ON d (k);
INSERT INTO d VALUES (NULL, 'p');
DELETE FROM d WHERE v IN ('m', 'p');
CREATE UNIQUE INDEX d_kn ON d (k) NULLS NOT DISTINCT;
--! error 23505
INSERT INTO d VALUES (NULL, 'q');
--! error 23505
INSERT INTO d VALUES (3, 'x');
INSERT INTO d VALUES (3, 'w');
SELECT * FROM d;

-- A table without a primary key: equal rows are one key twice.
CREATE TABLE nk (a int, b int);
CREATE UNIQUE INDEX nk_a ON nk (a);
--! error 23505
INSERT INTO nk VALUES (1, 1), (1, 1);
INSERT INTO nk VALUES (1, 1), (2, 2);
--! error 23505
INSERT INTO nk VALUES (1, 1);
--! error 23505
UPDATE nk SET a = 1 WHERE a = 2;
SELECT * FROM nk;

SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('u', 'd', 'nk') ORDER BY indexname;
SELECT c.relname, i.indisunique, i.indisprimary, i.indnullsnotdistinct FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE c.relname IN ('u_pkey', 'u_email', 'u_ab', 'd_v', 'd_k', 'd_kn', 'nk_a') ORDER BY c.relname;
DROP INDEX u_email;
INSERT INTO u VALUES (11, 'a@x', 11, 11);
SELECT * FROM u WHERE email = 'a@x';
