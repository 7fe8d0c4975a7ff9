-- Ad-hoc queries whose sorts and operator state pass work_mem (at its
-- least, 64kB) spill to temporary files and must still give PostgreSQL's
-- rows, in PostgreSQL's order under ORDER BY (PostgreSQL spills too).

SET work_mem = '64kB';
CREATE TABLE t (k int PRIMARY KEY, g int, v int, s text, n numeric, f float8);
INSERT INTO t SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 701 END, (i * 7919) % 1000,
  CASE WHEN i % 17 = 0 THEN NULL ELSE chr(65 + i % 26) || lower(chr(65 + i % 7)) || (i % 101) END,
  (i % 997) / 7.0, CASE WHEN i % 251 = 0 THEN 'NaN'::float8 ELSE (i % 89) * 0.5 END
  FROM generate_series(1, 12000) i;
CREATE TABLE u (k int PRIMARY KEY, g int, w text);
INSERT INTO u SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 1201 END, 'w' || i FROM generate_series(1, 6000) i;

-- External sorts: several keys, DESC, NULLS FIRST/LAST, "C" collation,
-- NaN and numerics, LIMIT and OFFSET, expressions.
SELECT k, g, v FROM t ORDER BY g NULLS FIRST, v DESC, k;
SELECT k, s FROM t ORDER BY s DESC NULLS LAST, k;
SELECT k, s FROM t ORDER BY s COLLATE "C" NULLS FIRST, k DESC;
SELECT k, f, n FROM t ORDER BY f DESC, n, k;
SELECT k, v - g AS d FROM t WHERE v > 10 ORDER BY v - g, k LIMIT 40 OFFSET 5000;
SELECT k FROM t ORDER BY v, k OFFSET 11990;

-- Hash aggregates of many groups, every kind of aggregate.
SELECT k % 4000 AS b, count(*), sum(v), min(s), max(n), avg(f), count(DISTINCT v % 3),
  bool_or(v > 990), string_agg(s, ',' ORDER BY s, k), array_agg(k ORDER BY k)
  FROM t GROUP BY k % 4000;
SELECT g, s, count(*), stddev_pop(v), percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM t GROUP BY g, s;
SELECT count(*), sum(c) FROM (SELECT k, count(*) AS c FROM t GROUP BY k) x;

-- DISTINCT and DISTINCT ON.
SELECT DISTINCT s, v FROM t;
SELECT DISTINCT n, f FROM t;
SELECT DISTINCT ON (g) g, k, v FROM t ORDER BY g, v DESC, k;

-- Joins of every kind.
SELECT t.k, u.k, u.w FROM t JOIN u ON t.g = u.g;
SELECT t.k, u.k FROM t LEFT JOIN u ON t.g = u.g AND u.k % 3 = 0;
SELECT t.k, u.k FROM t FULL JOIN u ON t.g = u.g AND t.v < 500;
SELECT k, v FROM t WHERE g IN (SELECT g FROM u WHERE k % 2 = 0);
SELECT k, v FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.g = t.g);

-- Set operations.
SELECT g, s FROM t UNION SELECT g, w FROM u;
SELECT g FROM t INTERSECT ALL SELECT g FROM u;
SELECT g, v FROM t EXCEPT SELECT g, k FROM u;
