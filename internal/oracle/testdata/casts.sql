-- CAST and :: between the supported types, assignment casts on INSERT
-- and UPDATE, and the errors a cast raises: 22P02 (bad text for a
-- number or boolean), 22007/22008 (bad date or time), 22003 (out of
-- range), 22001 (too long for varchar(n) on assignment).

SELECT CAST(1 AS text) AS a, 1::bigint AS b, '42'::int AS c, ' 42 '::int AS d, '-7'::smallint AS e,
       '1.5'::numeric(4,2) AS f, 1.5::int AS g, 2.5::int AS h, (-2.5)::int AS i, 2.5::float8::int AS j,
       3.5::real::int AS k, 'true'::boolean AS l, 'yes'::boolean AS m, 'f'::bool AS n, 1::boolean AS o,
       true::int AS p, false::text AS q, 'abcdef'::varchar(3) AS r, 123::numeric(6,2) AS s,
       1.005::numeric(4,2) AS t, 7::float8 / 2 AS u, 1e3::int AS v, 12.5::text AS w;

SELECT '2024-02-29'::date AS a, '2024-02-29 13:14:15'::timestamp::date AS b, '2024-01-01'::date::timestamp AS c,
       '2024-01-01 12:00:00+02'::timestamptz AS d, '2024-06-01 00:00'::timestamp::timestamptz AS e,
       '2024-01-01 23:30:00-05'::timestamptz::date AS f, '1 day 2 hours'::interval AS g,
       '90 minutes'::interval::text AS h, '2024-03-10'::date::text AS i, 'abc'::bytea AS j,
       '\x00ff'::bytea::text AS k, 20240101::text::date AS l;

--! error 22P02
SELECT 'abc'::int;
--! error 22P02
SELECT ''::int;
--! error 22P02
SELECT '1.5'::int;
--! error 22P02
SELECT 'maybe'::boolean;
--! error 22P02
SELECT 'x1'::numeric;
--! error 22003
SELECT 40000::smallint;
--! error 22003
SELECT '3000000000'::int;
--! error 22003
SELECT 1e20::bigint;
--! error 22003
SELECT 12345.678::numeric(6,2);
--! error 22008
SELECT '2024-13-01'::date;
--! error 22008
SELECT '2023-02-29'::date;
--! error 22007
SELECT 'yesterday-ish'::date;
--! error 22007
SELECT 'not a time'::timestamp;

-- Casts over table columns, maintained.
CREATE TABLE raw (id int, txt text, num numeric(10,3), i int, flag boolean, day date, ts timestamp);
INSERT INTO raw VALUES
  (1, '10', 1.25, 7, true, '2024-01-31', '2024-01-31 10:00:00'),
  (2, '-3', -2.5, -7, false, '2000-02-29', '2000-02-29 23:59:59.5'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, '0', 0.5, 0, true, '1970-01-01', '1970-01-01 00:00:00');

CREATE MATERIALIZED VIEW casted AS
SELECT id,
       CAST(txt AS integer) AS txt_int,
       txt::numeric + 1 AS txt_numeric,
       num::int AS num_int,
       num::text AS num_text,
       num::float8 AS num_float,
       i::numeric / 4 AS i_numeric_div,
       i::bigint * 3000000000 AS i_bigint,
       i::text AS i_text,
       i::float8 / 4 AS i_float_div,
       flag::int AS flag_int,
       flag::text AS flag_text,
       day::timestamp AS day_ts,
       ts::date AS ts_date,
       day::text AS day_text,
       ts::timestamptz AS ts_tz
FROM raw;

-- A value the view cannot cast fails the change.
--! error 22P02
INSERT INTO raw (id, txt) VALUES (5, 'twelve');
--! error 22P02
UPDATE raw SET txt = '1e3' WHERE id = 1;
UPDATE raw SET txt = ' 12 ' WHERE id = 1;
DELETE FROM raw WHERE id = 2;

-- Assignment casts: literals and expressions stored in typed columns.
CREATE TABLE typed (i int, s smallint, n numeric(5,2), v varchar(4), t text, d date, f float8);
INSERT INTO typed VALUES ('12', '3', '1.234', 'abcd', 5, '2024-05-06', '1.5');
INSERT INTO typed VALUES (1.7, 2.5, 1.235, 'ab  ', 6.5, '2024-05-06 10:00'::timestamp, 2);
INSERT INTO typed VALUES (-1.5, -2.5, -1.235, NULL, true, NULL, 7::numeric / 3);
--! error 22001
INSERT INTO typed (v) VALUES ('abcde');
--! error 22003
INSERT INTO typed (s) VALUES (40000);
--! error 22003
INSERT INTO typed (n) VALUES (1000);
--! error 22P02
INSERT INTO typed (i) VALUES ('x');
--! error 42804
INSERT INTO typed (i) VALUES (true);
--! error 42804
INSERT INTO typed (d) VALUES (1);
UPDATE typed SET v = 'wxyz', n = n * 2 WHERE i = 12;
--! error 22001
UPDATE typed SET v = 'vwxyz' WHERE v IS NOT NULL;
CREATE MATERIALIZED VIEW typed_view AS SELECT * FROM typed;
SELECT * FROM typed ORDER BY i;

-- numeric to an integer type rounds half away from zero, then checks the
-- range, which reaches one further below zero than above it. (A minus
-- sign before a literal applies after its cast: -2147483648::numeric::int4
-- casts 2147483648, out of range.)
SELECT '-9223372036854775808'::numeric::int8 AS a, '-9223372036854775808'::numeric::bigint AS b,
       '-9223372036854775808.4'::decimal::int8 AS c, '9223372036854775807.4'::numeric::int8 AS d,
       '-2147483648'::numeric::int4 AS e, '-2147483648.4'::numeric::int4 AS f, '2147483647.4'::numeric::int4 AS g,
       '-32768'::numeric::int2 AS h, '-32768.4'::numeric::smallint AS i, '32767.4'::numeric::int2 AS j,
       (-9223372036854775808.4)::decimal::int8 AS k, CAST(-2147483648.4 AS numeric) :: integer AS l,
       '-1e18'::numeric::int8 AS m, (-2.5)::numeric::int8 AS n;
--! error 22003
SELECT '-9223372036854775808.5'::numeric::int8;
--! error 22003
SELECT '9223372036854775807.5'::numeric::int8;
--! error 22003
SELECT -9223372036854775808.4::decimal::int8;
--! error 22003
SELECT '-2147483648.5'::numeric::int4;
--! error 22003
SELECT -2147483648::numeric::int4;
--! error 22003
SELECT '-32768.5'::numeric::int2;
--! error 22003
SELECT '1e19'::numeric::int8;
CREATE TABLE extremes (x numeric, y bigint, z int, w smallint);
INSERT INTO extremes VALUES ('-9223372036854775808.4', '-9223372036854775808.4'::numeric, '-2147483648.4'::numeric, '-32768.4'::numeric),
  (-1.5, -1.5, -1.5, -1.5);
--! error 22003
INSERT INTO extremes (y) VALUES ('-9223372036854775808.5'::numeric);
CREATE MATERIALIZED VIEW extremes_cast AS SELECT x::int8 AS x8, y, z, w, round(x)::bigint AS r FROM extremes;
SELECT x::int8, (x - 0.5)::int8 IS NULL AS gone FROM extremes WHERE x > -2;
INSERT INTO extremes (x) VALUES (-9223372036854775807);
--! error 22003
UPDATE extremes SET x = x - 1.5 WHERE x = -9223372036854775807;
