-- Every supported type stored, printed, compared, grouped and aggregated:
-- boolean, smallint, integer, bigint, numeric(p,s), real, double
-- precision, text, varchar(n), bytea, date, timestamp, timestamptz,
-- interval. Text compares bytewise (C collation). Output uses
-- PostgreSQL's text formats: t/f, shortest round-trip floats, ISO dates,
-- timestamptz in UTC, intervals in the postgres style, bytea as \x hex.

CREATE TABLE everything (
  id int,
  bo boolean,
  sm smallint,
  it integer,
  bi bigint,
  nu numeric(10,2),
  re real,
  dp double precision,
  tx text,
  vc varchar(5),
  by bytea,
  da date,
  ts timestamp,
  tz timestamptz,
  iv interval
);

CREATE MATERIALIZED VIEW all_columns AS SELECT * FROM everything;

CREATE MATERIALIZED VIEW extremes AS
SELECT count(*) AS n,
       bool_and(bo) AS bo_and, bool_or(bo) AS bo_or,
       min(sm) AS sm_min, max(sm) AS sm_max,
       min(it) AS it_min, max(it) AS it_max,
       min(bi) AS bi_min, max(bi) AS bi_max,
       min(nu) AS nu_min, max(nu) AS nu_max,
       min(re) AS re_min, max(re) AS re_max,
       min(dp) AS dp_min, max(dp) AS dp_max,
       min(tx) AS tx_min, max(tx) AS tx_max,
       min(vc) AS vc_min, max(vc) AS vc_max,
       min(da) AS da_min, max(da) AS da_max,
       min(ts) AS ts_min, max(ts) AS ts_max,
       min(tz) AS tz_min, max(tz) AS tz_max,
       min(iv) AS iv_min, max(iv) AS iv_max
FROM everything;

CREATE MATERIALIZED VIEW distinct_counts AS
SELECT count(DISTINCT bo) AS bo, count(DISTINCT sm) AS sm, count(DISTINCT it) AS it,
       count(DISTINCT bi) AS bi, count(DISTINCT nu) AS nu, count(DISTINCT re) AS re,
       count(DISTINCT dp) AS dp, count(DISTINCT tx) AS tx, count(DISTINCT vc) AS vc,
       count(DISTINCT by) AS by, count(DISTINCT da) AS da, count(DISTINCT ts) AS ts,
       count(DISTINCT tz) AS tz, count(DISTINCT iv) AS iv
FROM everything;

-- Exact sums: integers, numerics, and binary fractions in floats (whose
-- sums do not depend on the order of addition).
CREATE MATERIALIZED VIEW sums AS
SELECT sum(sm) AS sm, sum(it) AS it, sum(bi) AS bi, sum(nu) AS nu, sum(re) AS re, sum(dp) AS dp,
       avg(sm) AS sm_avg, avg(it) AS it_avg, avg(bi) AS bi_avg, avg(nu) AS nu_avg, avg(dp) AS dp_avg,
       sum(iv) AS iv_sum
FROM everything;

CREATE MATERIALIZED VIEW by_bool AS SELECT bo, count(*) AS n FROM everything GROUP BY bo;
CREATE MATERIALIZED VIEW by_numeric AS SELECT nu, count(*) AS n, sum(it) AS it FROM everything GROUP BY nu;
CREATE MATERIALIZED VIEW by_text AS SELECT tx, count(*) AS n, min(id) AS first_id FROM everything GROUP BY tx;
CREATE MATERIALIZED VIEW by_varchar AS SELECT vc, count(*) AS n FROM everything GROUP BY vc;
CREATE MATERIALIZED VIEW by_bytea AS SELECT by, count(*) AS n FROM everything GROUP BY by;
CREATE MATERIALIZED VIEW by_date AS SELECT da, count(*) AS n, max(ts) AS latest FROM everything GROUP BY da;
CREATE MATERIALIZED VIEW by_timestamp AS SELECT ts, count(*) AS n FROM everything GROUP BY ts;
CREATE MATERIALIZED VIEW by_timestamptz AS SELECT tz, count(*) AS n FROM everything GROUP BY tz;
CREATE MATERIALIZED VIEW by_float AS SELECT dp, count(*) AS n FROM everything GROUP BY dp;

CREATE MATERIALIZED VIEW type_filters AS
SELECT id FROM everything
WHERE bo OR sm = 2 OR it > 100 OR bi < -1 OR nu = 1.50 OR re = 0.5 OR dp >= 1e100
   OR tx = 'é' OR vc = 'abc' OR by = '\x00ff' OR da = '2024-02-29' OR ts < '1970-01-01'
   OR tz = '2024-01-01 00:00:00+00' OR iv > '1 year';

INSERT INTO everything VALUES
  (1, true, 1, 10, 100, 1.5, 0.5, 0.25, 'a', 'abc', '\x00ff', '2024-02-29', '2024-02-29 12:34:56', '2024-01-01 02:00:00+02', '1 year 2 mons 3 days 04:05:06'),
  (2, false, -2, -20, -200, -2.25, -1.5, 1e100, 'B', 'ab', '\x', '1999-12-31', '1999-12-31 23:59:59.999999', '1999-12-31 23:00:00-05', '-1 days'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, true, 32767, 2147483647, 9223372036854775807, 99999999.99, 3.25, -0.125, 'é', 'abcde', 'abc', '0001-01-01', '1900-01-01 00:00:00', '2024-06-30 12:00:00.5+00', '36 hours'),
  (5, false, -32768, -2147483648, -9223372036854775808, -99999999.99, 0, 0, '', '', '\xdeadbeef', '2100-12-31', '2038-01-19 03:14:08', '1970-01-01 00:00:00+00', '00:00:00.000001'),
  (6, true, 2, 10, 100, 1.50, 0.5, 0.25, 'a', 'abc', '\x00ff', '2024-02-29', '2024-02-29 12:34:56', '2024-01-01 00:00:00+00', '1 mon -1 days');

SELECT * FROM everything ORDER BY id;

-- Moving extremes, duplicates and NULLs around.
UPDATE everything SET sm = 3, it = 11, tx = 'ab', vc = 'b', by = '\x01', da = '2024-03-01', iv = '2 hours' WHERE id = 6;
DELETE FROM everything WHERE id = 4;
UPDATE everything SET bo = NULL, dp = NULL, tz = NULL WHERE id = 1;
INSERT INTO everything SELECT id + 10, bo, sm, it, bi, nu, re, dp, tx, vc, by, da, ts, tz, iv FROM everything WHERE id < 3;
DELETE FROM everything WHERE id = 5;
UPDATE everything SET re = re * 4, nu = nu + 0.01 WHERE re IS NOT NULL;

-- Special float values: NaN is equal to itself and sorts above every
-- other value; -0 equals 0.
INSERT INTO everything (id, re, dp) VALUES (20, 'NaN', 'NaN'), (21, 'Infinity', '-Infinity'), (22, '-0', '-0');
DELETE FROM everything WHERE id = 21;

-- Output formats and comparisons.
SELECT true AS a, false AS b, 1.0::real AS c, 0.1::real AS d, 1e-7::float8 AS e, 123456789012345678::float8 AS f,
       1e100::float8 AS g, 'NaN'::float8 AS h, '-0'::float8 AS i, 100::numeric(6,2) AS j, '\xDEADBEEF'::bytea AS k,
       '2024-01-01 00:00:00.123'::timestamp AS l, '2024-07-01 12:00:00+05:30'::timestamptz AS m,
       '1 year 13 months'::interval AS n, '-1 hour -2 minutes'::interval AS o, '1 day 25:00:00'::interval AS p,
       'abc'::varchar(10) AS q, 'é'::text < 'z' AS r, 'Z' < 'a' AS s, '1 mon'::interval = '30 days' AS t,
       '2024-01-01'::date - '2023-12-25'::date AS u, '2024-01-31'::date + 1 AS v, '0.5'::real::float8 AS w;

-- Interval field restrictions: a bare number takes the unit of the
-- restriction, and fields to the right of its last one are zeroed, on
-- input, in casts and when a column of the restricted type is assigned.
CREATE TABLE spans (id int, d interval day, ym interval year to month, hm interval hour to minute, s interval second(0));
CREATE MATERIALIZED VIEW span_view AS
SELECT id, d, ym, hm, s, d + ym AS both_, DATE '1998-12-01' - d AS before_, d > interval '10' day AS long_ FROM spans;
INSERT INTO spans VALUES (1, '90', '1-6', '1 day 02:03:04', '1.5'), (2, '1 day 25:00', '14 months 3 days', '90', '2.5');
INSERT INTO spans SELECT id + 10, ym, d, d + interval '7' hour, hm FROM spans;
UPDATE spans SET d = d + interval '36' hour, s = s + interval '1.5' second WHERE id < 10;
SELECT id, d, ym, hm, s FROM spans ORDER BY id;
SELECT interval '90' day, interval '3' month, interval '1' year, interval '1:30' minute to second,
       '1 day 02:03:04.5678'::interval day to second(2), CAST(interval '100' hour AS interval day),
       DATE '1998-12-01' - interval '90' day AS q1_cutoff, DATE '1994-01-01' + interval '1' year AS q6_end;
