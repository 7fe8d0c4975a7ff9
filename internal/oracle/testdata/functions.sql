-- Scalar functions inside materialized views, maintained under inserts,
-- updates and deletes: string functions, LIKE/ILIKE, numeric and
-- date/time functions, to_char/to_date, and the variance family.

CREATE TABLE people (id int PRIMARY KEY, name text, email varchar(40), city text, born date, salary numeric(10,2), score double precision, seen timestamp, logged timestamptz);

INSERT INTO people VALUES
  (1, 'Ann Smith', 'ann@example.com', 'Paris', '1990-04-12', 5200.50, 7.25, '2026-01-03 08:15:00', '2026-01-03 08:15:00+00'),
  (2, 'bob jones', 'BOB@Example.org', 'paris', '1985-12-31', 4100.00, 9.5, '2026-02-28 23:59:59.5', '2026-02-28 23:59:59.5+00'),
  (3, 'Chloé Dupont', NULL, 'Lyon', '2000-02-29', NULL, NULL, '2025-12-31 00:00:00', NULL),
  (4, '  padded  ', 'x_y@z.io', 'Lyon', NULL, 0.01, -1.5, NULL, '2026-03-01 12:00:00+00');

CREATE MATERIALIZED VIEW names AS
  SELECT id, upper(name) AS up, lower(name) AS low, initcap(name) AS cap, length(name) AS len,
         octet_length(name) AS bytes, trim(name) AS trimmed, btrim(name, ' ') AS bt, ltrim(name) AS lt, rtrim(name) AS rt,
         substring(name FROM 2 FOR 3) AS sub, substr(name, 3) AS sub2, left(name, 3) AS l3, right(name, -2) AS r2,
         lpad(name, 12, '*') AS lp, rpad(name, 12) AS rp, reverse(name) AS rev, replace(name, ' ', '_') AS repl,
         position('o' IN name) AS pos, strpos(name, 'n') AS sp, split_part(email, '@', 2) AS domain,
         split_part(email, '.', -1) AS tld, concat(name, ' <', email, '>') AS full, concat_ws(' / ', name, city, email) AS parts,
         name || ' from ' || city AS about, starts_with(lower(city), 'p') AS p_city, md5(name) AS hash,
         repeat(left(city, 1), 3) AS rep, translate(city, 'aeiou', 'AEIOU') AS tr
  FROM people;

CREATE MATERIALIZED VIEW matches AS
  SELECT id, name FROM people
  WHERE email LIKE '%@example.%' OR name ILIKE '%DUPONT' OR email LIKE '%!_%' ESCAPE '!' OR city NOT ILIKE 'p%';

CREATE MATERIALIZED VIEW money AS
  SELECT id, round(salary) AS r0, round(salary, 1) AS r1, round(salary, -2) AS rm2, trunc(salary, 1) AS t1,
         ceil(salary) AS c, floor(salary / 3) AS f, abs(salary - 5000) AS a, sign(salary - 5000) AS s,
         mod(id * 7, 3) AS m, div(salary, 7) AS d, sqrt(salary) AS sq, power(salary, 2) AS p2,
         round(score) AS rs, trunc(score) AS ts, ceil(score) AS cs, abs(score) AS sa, power(score, 2) AS ps,
         exp(id) AS e, ln(id) AS lnid, log(id * 10) AS lg, log(2, id) AS lg2,
         to_char(salary, 'FM999,999.00') AS pretty, to_char(score, '99.9') AS sc, to_char(id, '000') AS padded
  FROM people;

CREATE MATERIALIZED VIEW dates AS
  SELECT id, date_trunc('month', seen) AS month, date_trunc('week', seen) AS week, date_trunc('hour', logged) AS hour,
         extract(year FROM born) AS y, extract(dow FROM seen) AS dow, extract(epoch FROM seen) AS ep,
         date_part('doy', born) AS doy, extract(quarter FROM logged) AS q, age(seen, born) AS age,
         make_date(extract(year FROM born)::int, 1, 1) AS jan1, to_char(seen, 'YYYY-MM-DD HH24:MI') AS fmt,
         to_char(born, 'FMDay, FMDD Month YYYY') AS long, to_char(logged, 'Dy DD Mon YYYY HH12:MI AM TZ') AS stamp,
         seen + interval '1 month' AS next_month, born - 1 AS day_before, date_bin('15 minutes', seen, timestamp '2000-01-01') AS bin
  FROM people;

CREATE MATERIALIZED VIEW local_times AS
  SELECT id, logged AT TIME ZONE 'Europe/Paris' AS paris, seen AT TIME ZONE 'America/New_York' AS from_ny,
         date_trunc('day', logged AT TIME ZONE 'Asia/Tokyo') AS tokyo_day,
         date_trunc('day', logged, 'America/Los_Angeles') AS la_day
  FROM people;

CREATE MATERIALIZED VIEW by_month AS
  SELECT date_trunc('month', seen) AS month, count(*) AS n, to_char(date_trunc('month', seen), 'Mon YYYY') AS label
  FROM people GROUP BY date_trunc('month', seen);

CREATE MATERIALIZED VIEW stats AS
  SELECT lower(city) AS city, count(*) AS n, var_samp(salary) AS vs, var_pop(salary) AS vp,
         stddev(salary) AS sd, stddev_pop(salary) AS sdp, variance(id) AS vi, stddev_samp(id) AS sdi
  FROM people GROUP BY lower(city);

CREATE MATERIALIZED VIEW totals AS
  SELECT count(*) AS n, var_pop(salary) AS vp, stddev_samp(salary) AS sd, var_samp(id) AS vi FROM people;

-- Functions in GROUP BY, HAVING, join conditions, and ORDER BY inside
-- aggregates whose result does not depend on it.
CREATE TABLE cities (name text, country text);
INSERT INTO cities VALUES ('PARIS', 'FR'), ('lyon', 'FR'), ('Oslo', 'NO');

CREATE MATERIALIZED VIEW by_country AS
  SELECT c.country, upper(left(p.city, 1)) AS initial, count(*) AS n, sum(p.salary ORDER BY p.id) AS total,
         max(length(p.name) ORDER BY p.name) AS longest
  FROM people p JOIN cities c ON lower(p.city) = lower(c.name) AND c.name ILIKE '%' || left(p.city, 2) || '%'
  GROUP BY c.country, upper(left(p.city, 1))
  HAVING count(*) >= 1 AND coalesce(stddev_pop(p.salary), 0) >= 0;

INSERT INTO people VALUES
  (5, 'Émile Zola', 'emile@EXAMPLE.com', 'Paris', '1840-04-02', 9999.99, 0, '2026-01-31 12:00:00', '2026-01-31 12:00:00+00'),
  (6, 'Zoë', 'z@x.y', 'LYON', '2024-02-29', 12.34, 100, '2026-01-01 00:00:00', '2026-01-01 00:00:00+00');

UPDATE people SET name = 'Ann Smith-Jones', salary = salary + 100 WHERE id = 1;
UPDATE people SET city = 'Paris' WHERE id = 3;
UPDATE cities SET name = 'Lyon' WHERE country = 'FR' AND name LIKE 'l%';
UPDATE people SET seen = seen + interval '40 days', born = born + 365 WHERE id IN (2, 6);
DELETE FROM people WHERE id = 4;

SELECT id, to_char(salary, 'L99G999D99PR') AS l, to_char(-salary, '9999.99MI') AS mi, to_char(id, 'RN') AS roman FROM people ORDER BY id;
SELECT to_date('2026-03-07', 'YYYY-MM-DD') AS d, to_timestamp('07 Mar 2026 15:04', 'DD Mon YYYY HH24:MI') AS ts;
SELECT id, extract(epoch FROM logged - seen) AS delta FROM people ORDER BY id;

INSERT INTO people VALUES (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE people SET salary = NULL WHERE id = 2;
DELETE FROM people WHERE city = 'Lyon' OR city = 'LYON';
DELETE FROM people;
INSERT INTO people VALUES (8, 'Solo', 'solo@example.com', 'Oslo', '1999-09-09', 1.50, 2.5, '2026-05-05 05:05:05', '2026-05-05 05:05:05+00');

-- Errors in maintained expressions fail the statement and change nothing.
--! error 2201F
INSERT INTO people VALUES (9, 'Neg', 'neg@example.com', 'Oslo', '1999-09-09', -4, 1, '2026-05-05', '2026-05-05+00');
SELECT count(*) FROM people;
