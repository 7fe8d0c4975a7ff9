-- Materialized views over timestamptz data whose results depend on the
-- session time zone: wall-clock dates and hours, day and week
-- boundaries, text output and input, calendar arithmetic, comparisons of
-- timestamptz with timestamps and dates. TestZoneViews runs this script
-- with the same TimeZone on both sides in several zones, UTC among them;
-- the instants sit around daylight-saving transitions.

CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz, amount int, label text);

INSERT INTO ev VALUES
  (1, '2026-03-28 23:30:00+00', 10, 'a'), (2, '2026-03-29 00:30:00+00', 20, 'b'),
  (3, '2026-03-29 01:30:00+00', 30, 'a'), (4, '2026-03-08 06:30:00+00', 40, 'c'),
  (5, '2026-03-08 07:30:00+00', 50, 'a'), (6, '2026-10-25 00:30:00+00', 60, 'b'),
  (7, '2026-10-25 01:30:00+00', 70, 'c'), (8, '2026-11-01 05:30:00+00', 80, 'a'),
  (9, '2026-11-01 06:30:00+00', 90, 'b'), (10, NULL, 100, 'c'), (11, '2026-06-30 22:00:00+00', 5, 'a'),
  (12, '2026-06-30 22:00:00+00', 5, 'a');

CREATE MATERIALIZED VIEW by_day AS
  SELECT date_trunc('day', ts) AS day, count(*) AS n, sum(amount) AS total FROM ev GROUP BY date_trunc('day', ts);

CREATE MATERIALIZED VIEW by_local_date AS
  SELECT ts::date AS d, ts::timestamp::date AS d2, count(*) AS n FROM ev GROUP BY ts::date, ts::timestamp::date;

CREATE MATERIALIZED VIEW fields AS
  SELECT id, extract(hour from ts) AS h, extract(dow from ts) AS dow, extract(timezone from ts) AS tz,
         date_part('day', ts) AS dd, to_char(ts, 'YYYY-MM-DD HH24:MI OF') AS shown, ts::text AS txt,
         ts::timestamp AS wall, ts + interval '1 day' AS next_day, ts + interval '1 month' AS next_month,
         date_trunc('week', ts) AS wk, ts || ' ' || label AS tagged
  FROM ev;

CREATE MATERIALIZED VIEW local_filter AS
  SELECT id, amount FROM ev WHERE ts::timestamp >= timestamp '2026-03-29 00:00' AND ts < date '2026-10-26';

CREATE MATERIALIZED VIEW text_input AS
  SELECT id, (to_char(ts, 'YYYY-MM-DD HH24:MI:SS'))::timestamptz AS back, ts = ts::timestamp AS same
  FROM ev;

CREATE MATERIALIZED VIEW hourly AS
  SELECT label, date_trunc('hour', ts) AS hr, max(ts) AS last_ts, min(ts::timestamp) AS first_wall
  FROM ev GROUP BY label, date_trunc('hour', ts);

CREATE TABLE days (d date PRIMARY KEY, note text);
INSERT INTO days VALUES ('2026-03-29', 'spring'), ('2026-10-25', 'autumn'), ('2026-07-01', 'summer'), ('2026-03-08', 'us spring');

CREATE MATERIALIZED VIEW joined AS
  SELECT days.note, ev.id FROM ev JOIN days ON ev.ts::date = days.d;

-- Changes: the views follow them in the zone they were created in.
INSERT INTO ev VALUES (13, '2026-03-29 00:59:59+00', 1, 'b'), (14, '2026-03-29 01:00:00+00', 2, 'b');
UPDATE ev SET ts = ts + interval '1 hour' WHERE id IN (1, 6, 8);
DELETE FROM ev WHERE id = 2;
UPDATE ev SET ts = '2026-10-25 02:30' WHERE id = 10;
INSERT INTO ev VALUES (15, '2026-03-29 02:30', 3, 'c'), (16, '2026-11-01 01:30', 4, 'c');
DELETE FROM ev WHERE id = 12;
UPDATE ev SET ts = NULL WHERE id = 3;

SELECT id, ts, ts::timestamp, ts::date FROM ev ORDER BY id;

-- A RANGE offset moves a timestamptz by days on the session zone's wall
-- clock (in Berlin a day before 03:15 on March 29 is 23 hours earlier).
INSERT INTO ev VALUES (20, '2026-03-28 01:45:00+00', 1, 'w'), (21, '2026-03-29 01:15:00+00', 1, 'w');
SELECT id, count(*) OVER (ORDER BY ts RANGE BETWEEN interval '1 day' PRECEDING AND CURRENT ROW) AS n
FROM ev WHERE ts IS NOT NULL ORDER BY id;
