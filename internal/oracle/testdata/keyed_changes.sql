-- Changes of tables with primary keys, of the shapes the random workloads
-- make (gen_keys.go), under views that join them on the key and on other
-- columns: statements that violate the key (23505) change nothing, alone
-- or inside a block, which COMMIT then rolls back; updates of one or both
-- columns of a two-column key; ON CONFLICT DO NOTHING proposing a key twice
-- and DO UPDATE from EXCLUDED, the row and a WHERE.

CREATE TABLE t1 (k int, c1 text, c2 numeric(8,2), PRIMARY KEY (k, c1));
CREATE TABLE t2 (k int PRIMARY KEY, c1 int);
CREATE MATERIALIZED VIEW v1 AS SELECT a.k, a.c1, b.c1 AS x FROM t1 a JOIN t2 b ON a.k = b.k;
CREATE MATERIALIZED VIEW v2 AS SELECT k, count(*) FROM t1 GROUP BY k;
CREATE MATERIALIZED VIEW v3 AS SELECT b.k, sum(a.c2) AS total FROM t1 a RIGHT JOIN t2 b ON a.k = b.c1 GROUP BY b.k;
INSERT INTO t1 VALUES (1, 'a', 1.00), (2, 'b', NULL);
INSERT INTO t2 VALUES (1, 5), (2, 6);
--! error 23505
INSERT INTO t1 VALUES (3, 'a', 1.00), (1, 'a', 2.00);
--! error 23505
INSERT INTO t2 VALUES (4, 1), (4, 2);
BEGIN;
INSERT INTO t2 VALUES (5, 1);
--! error 23505
INSERT INTO t2 VALUES (1, 1);
COMMIT;
BEGIN;
UPDATE t2 SET c1 = 9 WHERE k = 2;
--! error 23505
UPDATE t2 SET k = 1 WHERE k = 2;
ROLLBACK;
--! error 23505
UPDATE t1 SET k = 2, c1 = 'b' WHERE k = 1 AND c1 = 'a';
UPDATE t2 SET k = 7 WHERE k = 2;
INSERT INTO t2 VALUES (7, 3), (8, 4) ON CONFLICT (k) DO UPDATE SET c1 = EXCLUDED.c1;
INSERT INTO t2 VALUES (7, 30), (9, 4), (9, 5) ON CONFLICT (k) DO NOTHING;
INSERT INTO t1 VALUES (1, 'a', 3.50) ON CONFLICT (k, c1) DO UPDATE SET c2 = EXCLUDED.c2;
INSERT INTO t2 VALUES (8, 1), (1, 2) ON CONFLICT (k) DO UPDATE SET c1 = t2.c1 + 1 WHERE t2.c1 > 4;
UPDATE t1 SET c1 = 'b' WHERE k = 1 AND c1 = 'a';
BEGIN;
INSERT INTO t1 VALUES (5, 'x', 1.00);
UPDATE t1 SET c2 = c2 + 1.25 WHERE k = 1;
--! error 23505
INSERT INTO t1 VALUES (5, 'x', 1.00);
COMMIT;
DELETE FROM t2 WHERE k = 7;
SELECT * FROM t1 ORDER BY k, c1;
SELECT * FROM t2 ORDER BY k;
