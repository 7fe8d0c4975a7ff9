-- format() with %s %I %L %%, positions, widths and the - flag, and
-- quote_literal and quote_nullable, in queries and in materialized views
-- maintained under inserts, updates and deletes.

CREATE TABLE people (id int PRIMARY KEY, name text, city text, score numeric, seen date, w int);

INSERT INTO people VALUES
  (1, 'Ann', 'Paris', 12.5, '2026-01-02', 8),
  (2, 'o''brien', NULL, NULL, NULL, -6),
  (3, 'Select', 'New York', 0, '2025-12-31', NULL),
  (4, '', 'a\b', -1.25, '2026-06-30', 3);

CREATE MATERIALIZED VIEW formatted AS
  SELECT id, format('%s lives in %s', name, city) AS line, format('%I.%I', coalesce(city, 'nowhere'), name) AS ident,
         format('INSERT INTO t VALUES (%L, %L, %L)', name, score, seen) AS stmt,
         format('|%*s|%-*s|', w, name, w, city) AS padded, format('%2$s/%1$s %%', id, name) AS pos,
         format('|%10s|%-8s|', score, seen) AS fixed, quote_literal(city) AS ql, quote_nullable(city) AS qn,
         quote_nullable(score) AS qn_num
  FROM people WHERE name <> '';

CREATE MATERIALIZED VIEW by_city AS
  SELECT format('%s: %s', coalesce(city, '?'), count(*)) AS summary FROM people GROUP BY city;

SELECT * FROM formatted ORDER BY id;
--! unordered
SELECT * FROM by_city;

INSERT INTO people VALUES (5, 'Zoë', 'Paris', 99.999, '2026-02-28', 5);
UPDATE people SET city = 'Lyon', w = 12 WHERE id = 1;
UPDATE people SET name = 'x' WHERE id = 4;
DELETE FROM people WHERE id = 3;

SELECT format('Hello %s, %1$s', 'World'), format('%s', NULL), format('%L', NULL), format(NULL, 1);
SELECT format('|%5s|%-5s|%*s|', 'ab', 'cd', -4, 'ef'), format('%I', 'MixedCase'), quote_literal(42), quote_nullable(NULL::int);

--! error 22023
SELECT format('%s %s', 1);
--! error 22023
SELECT format('%x', 1);
--! error 22023
SELECT format('50%');
--! error 22004
SELECT format('%I', NULL);

-- to_char of intervals.
CREATE TABLE spans (id int PRIMARY KEY, d interval);
INSERT INTO spans VALUES (1, '1 year 2 months 3 days 04:05:06.789'), (2, '-27 hours'), (3, NULL), (4, '0');
CREATE MATERIALIZED VIEW span_text AS
  SELECT id, to_char(d, 'YYYY-MM-DD HH24:MI:SS.MS') AS full_text, to_char(d, 'FMHH12 AM DDD "days" RM') AS other,
         format('%s = %s', d, to_char(d, 'SSSS')) AS secs
  FROM spans;
SELECT * FROM span_text ORDER BY id;
UPDATE spans SET d = d * 2 WHERE id = 2;
INSERT INTO spans VALUES (5, '100 hours 59 minutes');
DELETE FROM spans WHERE id = 1;
SELECT to_char(interval '15h 2m 12s', 'HH24:MI:SS'), to_char(interval '-1 month', 'MM RM'), to_char(interval '40 days', 'WW W DD');
--! error 22007
SELECT to_char(interval '1 month', 'Month');

-- VARIADIC arrays.
CREATE TABLE parts (id int PRIMARY KEY, words text[]);
INSERT INTO parts VALUES (1, ARRAY['a', 'b']), (2, NULL), (3, ARRAY['x', NULL, 'z']);
CREATE MATERIALIZED VIEW joined AS SELECT id, format('%s+%s', VARIADIC words) AS two, format('%1$s', VARIADIC words) AS first FROM parts WHERE id <> 2;
SELECT * FROM joined ORDER BY id;
UPDATE parts SET words = ARRAY['p', 'q', 'r'] WHERE id = 1;
DELETE FROM parts WHERE id = 3;
