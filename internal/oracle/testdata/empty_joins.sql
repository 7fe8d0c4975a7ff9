-- Aggregates without GROUP BY over joins of empty relations return their
-- one row (count 0, sum NULL), ad hoc and in a CTE, when every relation
-- joined is empty and when only some are; then the same after rows come.

CREATE TABLE t2 (k int, c1 int, c2 bigint);
CREATE MATERIALIZED VIEW v1 AS SELECT a0.c2 AS g1, a0.c2 AS g2, string_agg(DISTINCT 'b', '') AS y1 FROM t2 a0 GROUP BY a0.c2, a0.c2;
CREATE TABLE t3 (a int);

SELECT count(a2.c2) AS y1 FROM t2 a0 JOIN v1 a1 ON a0.c2 = a1.g2 JOIN t2 a2 ON a0.c1 = a2.c1 AND (a0.c1 BETWEEN 1 AND 3 OR a1.g2 IS DISTINCT FROM -1);
WITH c1 AS (SELECT count(a2.c2) AS y1, sum(a0.k) AS s FROM t2 a0 JOIN v1 a1 ON a0.c2 = a1.g2 JOIN t2 a2 ON a0.c1 = a2.c1 WHERE a0.c1 IS NOT NULL) SELECT a0.y1, a0.s FROM c1 a0;
SELECT count(*), max(t3.a) FROM t2 JOIN t3 ON t2.k = t3.a;
SELECT count(*) FROM t2 FULL JOIN t3 ON t2.k = t3.a;
SELECT count(*) FROM (SELECT k FROM t2 UNION SELECT a FROM t3) u;
INSERT INTO t3 VALUES (1), (2);
SELECT count(*), max(t3.a) FROM t2 JOIN t3 ON t2.k = t3.a;
SELECT count(*), max(t3.a) FROM t2 RIGHT JOIN t3 ON t2.k = t3.a;
INSERT INTO t2 VALUES (1, 1, 5), (2, 2, 5);
SELECT count(a2.c2) AS y1 FROM t2 a0 JOIN v1 a1 ON a0.c2 = a1.g2 JOIN t2 a2 ON a0.c1 = a2.c1 AND (a0.c1 BETWEEN 1 AND 3 OR a1.g2 IS DISTINCT FROM -1);
SELECT count(*), max(t3.a) FROM t2 JOIN t3 ON t2.k = t3.a;
