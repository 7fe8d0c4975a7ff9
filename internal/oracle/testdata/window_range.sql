-- RANGE frames with offsets: the rows whose ORDER BY value lies within the
-- distance of the current row's. Peers always fall on the same side, so
-- these results are determined with ties.

CREATE TABLE r (id int PRIMARY KEY, i int, b bigint, n numeric(6,2), f float8, d date, ts timestamp, iv interval);

CREATE MATERIALIZED VIEW ints AS
  SELECT id,
         count(*) OVER (ORDER BY i RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS near,
         sum(i) OVER (ORDER BY i DESC RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS above,
         count(*) OVER (ORDER BY i NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS below_nf,
         count(*) OVER (ORDER BY i DESC NULLS LAST RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS lower_nl,
         min(i) OVER (ORDER BY i RANGE BETWEEN 2 FOLLOWING AND 5 FOLLOWING) AS ahead_min,
         sum(i) OVER (ORDER BY i RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP) AS others
  FROM r;
CREATE MATERIALIZED VIEW bigs AS
  SELECT id, count(*) OVER (ORDER BY b RANGE BETWEEN 10 PRECEDING AND 9223372036854775807 FOLLOWING) AS c,
         count(*) OVER (ORDER BY b DESC RANGE 9223372036854775807 PRECEDING) AS c2
  FROM r;
CREATE MATERIALIZED VIEW nums AS
  SELECT id, sum(n) OVER (ORDER BY n RANGE BETWEEN 0.5 PRECEDING AND 0.25 FOLLOWING) AS s,
         count(*) OVER (ORDER BY f RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW) AS cf,
         count(*) OVER (ORDER BY f DESC RANGE BETWEEN 'Infinity' PRECEDING AND 0 FOLLOWING) AS cf_inf
  FROM r;
CREATE MATERIALIZED VIEW times AS
  SELECT id, count(*) OVER (ORDER BY d RANGE BETWEEN '1 day' PRECEDING AND '1 day' FOLLOWING) AS cd,
         count(*) OVER (ORDER BY ts DESC RANGE BETWEEN CURRENT ROW AND '1 hour' FOLLOWING) AS cts,
         count(*) OVER (ORDER BY iv RANGE '1 mon' PRECEDING) AS civ
  FROM r;

INSERT INTO r VALUES
  (1, 1, 1, 1.00, 1.0, '2020-01-01', '2020-01-01 00:00', '1 day'),
  (2, 2, 5, 1.25, 2.5, '2020-01-02', '2020-01-01 00:30', '30 days'),
  (3, 2, 11, 1.75, 2.5, '2020-01-02', '2020-01-01 01:30', '1 mon'),
  (4, 4, -9223372036854775808, 2.25, 'Infinity', '2020-01-05', '2020-01-01 01:00', '2 mons'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (6, 7, 9223372036854775807, -1.00, '-Infinity', '2019-12-31', '2019-12-31 23:30', '-1 day');
INSERT INTO r VALUES (7, NULL, 3, 'NaN', 'NaN', '2020-01-03', '2020-01-01 00:59:59', '0');
-- Changes that move rows into and out of others' frames.
UPDATE r SET i = 3, n = 1.50, f = 3.0 WHERE id = 2;
DELETE FROM r WHERE id = 1;
UPDATE r SET i = NULL WHERE id = 3;
BEGIN;
INSERT INTO r VALUES (8, 5, 6, 2.00, 4.0, '2020-01-04', '2020-01-01 02:00', '3 days');
DELETE FROM r WHERE id = 8;
COMMIT;
UPDATE r SET d = d + 1, ts = ts + interval '15 minutes', iv = iv * 2;
DELETE FROM r;
