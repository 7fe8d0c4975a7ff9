-- bit_and, bit_or and bit_xor over smallint, integer and bigint, and the
-- boolean aggregates (bool_and, bool_or, every), maintained exactly under
-- deletes: bit_and and bit_or count each bit's set values, bit_xor is
-- linear. Negative values (every high bit set), NULLs, duplicates,
-- DISTINCT and FILTER; an append-only table keeps only the running value.
-- The ordered-set aggregates over an append-only table too.

CREATE TABLE b (id int PRIMARY KEY, g text, s smallint, i int, l bigint, f bool);

CREATE MATERIALIZED VIEW bits AS
  SELECT g,
         bit_and(s) AS and_s, bit_or(s) AS or_s, bit_xor(s) AS xor_s,
         bit_and(i) AS and_i, bit_or(i) AS or_i, bit_xor(i) AS xor_i,
         bit_and(l) AS and_l, bit_or(l) AS or_l, bit_xor(l) AS xor_l,
         bit_xor(DISTINCT i) AS xor_distinct, bit_or(DISTINCT i) AS or_distinct,
         bit_and(i) FILTER (WHERE f) AS and_true,
         bool_and(f) AS all_f, bool_or(f) AS any_f, every(i > 0) AS all_pos
  FROM b GROUP BY g;

CREATE MATERIALIZED VIEW bits_all AS
  SELECT bit_and(i) AS a, bit_or(l) AS o, bit_xor(s) AS x, bit_xor(i / 2) AS x1, count(*) AS n FROM b;

INSERT INTO b VALUES
  (1, 'a', 12, 12, 12, true),
  (2, 'a', 10, 10, 10, true),
  (3, 'a', NULL, NULL, NULL, NULL),
  (4, 'b', -1, -1, -1, false),
  (5, 'b', -32768, -2147483648, -9223372036854775808, true),
  (6, NULL, 7, 7, 7, NULL);

-- Duplicates: bit_xor cancels a value that occurs twice, DISTINCT keeps it.
INSERT INTO b VALUES (7, 'a', 10, 10, 10, false), (8, 'b', 32767, 2147483647, 9223372036854775807, true);
-- A delete restores the bits the deleted value had cleared.
DELETE FROM b WHERE id = 2;
UPDATE b SET g = 'a' WHERE id = 4;
UPDATE b SET i = i - 1, s = s - 1, l = l / 2 WHERE id IN (1, 8);
DELETE FROM b WHERE g = 'a';
DELETE FROM b WHERE id = 5;
INSERT INTO b VALUES (9, 'c', 0, 0, 0, false), (10, 'c', 255, 255, 255, true);
DELETE FROM b;
INSERT INTO b VALUES (11, 'd', 3, 3, 3, true);

SELECT g, bit_and(i), bit_or(s), bit_xor(l) FROM b GROUP BY g ORDER BY g;
SELECT bit_and(i) FROM b WHERE false;
--! error 42883
SELECT bit_and(1.5) FROM b;
--! error 42725
SELECT bit_or('1') FROM b;

-- Append-only input: bit_and and bit_or keep the running value, the
-- ordered-set aggregates their arrangement.
--! postgres CREATE TABLE ev (g int, v int, x float8)
CREATE TABLE ev (g int, v int, x float8) WITH (append_only = true);
CREATE MATERIALIZED VIEW ev_bits AS
  SELECT g, bit_and(v) AS a, bit_or(v) AS o, bit_xor(v) AS x,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS med,
         percentile_disc(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY v DESC) AS q,
         mode() WITHIN GROUP (ORDER BY v) AS m
  FROM ev GROUP BY g;
CREATE MATERIALIZED VIEW ev_all AS
  SELECT bit_and(v) AS a, bit_or(v) AS o, percentile_cont(0.9) WITHIN GROUP (ORDER BY x) AS p90 FROM ev;
INSERT INTO ev VALUES (1, 6, 1.0), (1, 3, 2.0), (2, NULL, NULL), (2, -4, 3.5);
INSERT INTO ev VALUES (1, 6, 10), (2, 5, -1), (3, 1, 0);
INSERT INTO ev SELECT s % 4, s, s / 3.0 FROM generate_series(1, 40) s;

