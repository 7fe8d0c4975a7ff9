-- time with time zone: values at several offsets, equal instants kept
-- apart by their offsets, casts, AT TIME ZONE with fixed zones,
-- interval arithmetic, in queries and in materialized views maintained
-- under inserts, updates and deletes.

CREATE TABLE shifts (id int PRIMARY KEY, site text, starts timetz, ends timetz(0));

INSERT INTO shifts VALUES
  (1, 'berlin', '08:00:00+01', '16:00:00+01'),
  (2, 'london', '07:00:00+00', '15:00:00+00'),
  (3, 'delhi', '13:30:00+05:30', '21:30:00.6+05:30'),
  (4, 'nyc', '02:00:00-04', NULL),
  (5, NULL, NULL, '23:59:59.9-03'),
  (6, 'berlin', '08:00:00+01', '17:00:00+01');

CREATE MATERIALIZED VIEW by_start AS
  SELECT starts, count(*) AS n, max(ends) AS last_end FROM shifts GROUP BY starts;

CREATE MATERIALIZED VIEW in_utc AS
  SELECT id, starts AT TIME ZONE 'UTC' AS starts_utc, starts AT TIME ZONE INTERVAL '+02:00' AS starts_cest,
         starts + interval '90 minutes' AS break_at, starts::time AS local_start
  FROM shifts;

CREATE MATERIALIZED VIEW same_start AS
  SELECT a.id AS a, b.id AS b FROM shifts a JOIN shifts b ON a.starts = b.starts AND a.id < b.id;

CREATE MATERIALIZED VIEW early AS
  SELECT id, site FROM shifts WHERE starts < '08:00:00+00';

SELECT * FROM by_start ORDER BY starts;
SELECT * FROM in_utc ORDER BY id;
SELECT * FROM same_start ORDER BY a, b;
SELECT * FROM early ORDER BY id;

INSERT INTO shifts VALUES (7, 'paris', '08:00:00+01', '16:00:00+01'), (8, 'utc', '07:00:00+00', '15:00:00+00');
UPDATE shifts SET starts = starts + interval '1 hour' WHERE site = 'berlin';
UPDATE shifts SET ends = '18:00:00+01' WHERE id = 7;
DELETE FROM shifts WHERE id = 2;
INSERT INTO shifts VALUES (9, 'tokyo', '16:00:00+09', '00:00:00+09');

SELECT '10:00+02'::timetz = '09:00+01'::timetz AS same_instant, '10:00+02'::timetz < '09:00+01'::timetz AS ordered;
SELECT '23:59:59.999999+14'::timetz, '00:00:00-15:59'::timetz, 'allballs'::timetz;
SELECT '12:34:56.789+03'::timetz(1), '12:34:56.789-03:30'::timetz(0);
SELECT extract(hour FROM timetz '10:30+05:30'), extract(timezone_minute FROM timetz '10:30+05:30');
SELECT timetz '10:00+02' AT TIME ZONE 'Asia/Tokyo', timetz '10:00+02' - interval '11 hours';
SELECT timestamptz '2024-07-01 12:00:00+00'::timetz, date '2024-07-01' + timetz '10:00+02';
SET TimeZone = 'America/New_York';
SELECT '10:00'::timetz AS on_today, time '10:00' AT TIME ZONE 'UTC' AS from_local;
SELECT starts FROM shifts WHERE starts IS NOT NULL ORDER BY starts, id;
