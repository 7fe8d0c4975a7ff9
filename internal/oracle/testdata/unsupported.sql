-- Constructs outside the supported set fail with 0A000 when the view is
-- created, rather than being maintained approximately. PostgreSQL runs
-- none of these (they are RockStream-only expectations). Some are
-- rejected by design (volatile functions cannot be maintained); others
-- are outside the first tier of the engine and move into the compared
-- scripts once supported.

CREATE TABLE t (a int, b text);
CREATE TABLE u (a int, c text);
INSERT INTO t VALUES (1, 'x'), (2, 'y');
INSERT INTO u VALUES (1, 'p');

-- Volatile and time-dependent functions: never maintainable as they are.
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_random AS SELECT a, random() AS r FROM t;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_now AS SELECT a, now() AS at FROM t;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_clock AS SELECT a FROM t WHERE clock_timestamp() > '2020-01-01';

-- Outside the first tier at first; now maintained, and compared with
-- PostgreSQL like any view from here on.
CREATE MATERIALIZED VIEW v_left AS SELECT t.a, u.c FROM t LEFT JOIN u ON t.a = u.a;
CREATE MATERIALIZED VIEW v_full AS SELECT t.a, u.c FROM t FULL JOIN u ON t.a = u.a;
CREATE MATERIALIZED VIEW v_exists AS SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a);
CREATE MATERIALIZED VIEW v_in_subquery AS SELECT a FROM t WHERE a IN (SELECT a FROM u);
CREATE MATERIALIZED VIEW v_window AS SELECT a, row_number() OVER (ORDER BY a) AS rn FROM t;
CREATE MATERIALIZED VIEW v_topk AS SELECT a FROM t ORDER BY a LIMIT 1;
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW v_recursive AS
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT DISTINCT n + 1 FROM r WHERE n < 3) SELECT n FROM r;
CREATE MATERIALIZED VIEW v_string_agg AS SELECT string_agg(b, ',' ORDER BY b) AS bs FROM t;
CREATE MATERIALIZED VIEW v_array_agg AS SELECT array_agg(b ORDER BY b) AS bs FROM t;

-- None of the rejected views exists, and the tables are untouched.
INSERT INTO t VALUES (3, 'z');
CREATE MATERIALIZED VIEW v_ok AS SELECT a, b FROM t;

-- A collation of PostgreSQL's whose order is not bytewise (ICU's).
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW icu_sorted AS SELECT b COLLATE "en-x-icu" AS b FROM t;
--! rockstream-error 0A000
SELECT b FROM t ORDER BY b COLLATE "und-x-icu";
--! rockstream-error 0A000
CREATE TABLE icu (a text COLLATE "en-x-icu");
