-- Event-time lateness: rows behind a table's watermark are dropped on
-- INSERT and counted; PostgreSQL gets only the accepted rows, and the
-- windowed views (whose closed windows release their state) must equal
-- PostgreSQL's over them.

--! postgres CREATE TABLE bids (id int, ts timestamp, price int, bidder text)
CREATE TABLE bids (id int, ts timestamp, price int, bidder text) WITH (event_time = 'ts', lateness = '10 minutes');

--! postgres CREATE MATERIALIZED VIEW per_window AS SELECT window_start, window_end, count(*) AS n, sum(price) AS total, max(price) AS top, count(DISTINCT bidder) AS bidders FROM (SELECT b.*, date_bin('30 minutes', b.ts, '1970-01-01') AS window_start, date_bin('30 minutes', b.ts, '1970-01-01') + interval '30 minutes' AS window_end FROM bids b WHERE isfinite(b.ts)) w GROUP BY window_start, window_end
CREATE MATERIALIZED VIEW per_window AS
  SELECT window_start, window_end, count(*) AS n, sum(price) AS total, max(price) AS top, count(DISTINCT bidder) AS bidders
  FROM TUMBLE(bids, ts, '30 minutes') GROUP BY window_start, window_end;

--! postgres CREATE MATERIALIZED VIEW sliding AS SELECT window_end, bidder, count(*) AS n FROM (SELECT b.*, ws + interval '20 minutes' AS window_end FROM (SELECT * FROM bids WHERE isfinite(ts)) b, generate_series(date_bin('10 minutes', b.ts, '1970-01-01') - interval '10 minutes', date_bin('10 minutes', b.ts, '1970-01-01'), interval '10 minutes') AS ws) h GROUP BY window_end, bidder
CREATE MATERIALIZED VIEW sliding AS
  SELECT window_end, bidder, count(*) AS n FROM HOP(bids, ts, '10 minutes', '20 minutes') GROUP BY window_end, bidder;

-- A view over all rows, windowed or not.
CREATE MATERIALIZED VIEW per_bidder AS SELECT bidder, count(*) AS n, min(ts) AS first FROM bids GROUP BY bidder;

--! rockstream-only
--! rows bids|ts|00:10:00|NULL|NULL|0
SELECT * FROM rockstream_catalog.lateness;

INSERT INTO bids VALUES (1, '2026-05-01 09:00', 10, 'ann'), (2, '2026-05-01 09:20', 20, 'bob'), (3, NULL, 5, 'ann');
INSERT INTO bids VALUES (4, '2026-05-01 09:45', 7, 'cy');

-- The watermark is 09:35: 09:20 is late (dropped), 09:40 is not.
--! postgres INSERT INTO bids VALUES (6, '2026-05-01 09:40', 8, 'bob'), (7, NULL, 1, 'dee')
INSERT INTO bids VALUES (5, '2026-05-01 09:20', 99, 'eve'), (6, '2026-05-01 09:40', 8, 'bob'), (7, NULL, 1, 'dee');

--! rockstream-only
--! rows 2026-05-01 09:45:00+00|2026-05-01 09:35:00+00|1
SELECT max_event_time, watermark, late_rows_dropped FROM rockstream_catalog.lateness;

-- Rows behind the watermark are final.
--! rockstream-error 55000
DELETE FROM bids WHERE id = 1;
--! rockstream-error 55000
UPDATE bids SET price = 0 WHERE id = 2;
--! rockstream-error 55000
UPDATE bids SET ts = '2026-05-01 09:00' WHERE id = 6;

-- Rows at or after it change freely; NULL times are never late.
UPDATE bids SET price = price + 1 WHERE ts >= '2026-05-01 09:35' OR ts IS NULL;
DELETE FROM bids WHERE id = 7;
UPDATE bids SET ts = '2026-05-01 10:30' WHERE id = 3;

-- 10:30 moved the watermark to 10:20.
--! postgres INSERT INTO bids VALUES (9, '2026-05-01 10:25', 3, 'ann')
INSERT INTO bids VALUES (8, '2026-05-01 10:00', 1, 'bob'), (9, '2026-05-01 10:25', 3, 'ann');

-- A transaction: its statements advance the watermark in turn; the views
-- see the rows at COMMIT.
BEGIN;
INSERT INTO bids VALUES (10, '2026-05-01 10:22', 4, 'bob');
INSERT INTO bids VALUES (11, '2026-05-01 11:30', 5, 'cy');
--! postgres INSERT INTO bids SELECT * FROM bids WHERE false
INSERT INTO bids VALUES (12, '2026-05-01 11:00', 6, 'cy');
INSERT INTO bids VALUES (13, '2026-05-01 11:25', 7, NULL);
COMMIT;

-- A rolled-back block changes neither rows nor the watermark nor the count.
BEGIN;
INSERT INTO bids VALUES (14, '2026-05-02 00:00', 1, 'ann');
--! postgres INSERT INTO bids SELECT * FROM bids WHERE false
INSERT INTO bids VALUES (15, '2026-05-01 12:00', 1, 'ann');
ROLLBACK;

--! rockstream-only
--! rows 2026-05-01 11:30:00+00|2026-05-01 11:20:00+00|3
SELECT max_event_time, watermark, late_rows_dropped FROM rockstream_catalog.lateness;

-- An INSERT ... SELECT goes through the same door.
--! postgres INSERT INTO bids SELECT id + 100, ts + interval '1 hour', price, bidder FROM bids WHERE ts >= '2026-05-01 10:20'
INSERT INTO bids SELECT id + 100, ts + interval '1 hour', price, bidder FROM bids WHERE ts IS NOT NULL;

--! rockstream-only
--! rows 2026-05-01 12:30:00+00|2026-05-01 12:20:00+00|7
SELECT max_event_time, watermark, late_rows_dropped FROM rockstream_catalog.lateness;

-- A view created now computes its windows from all the rows.
--! postgres CREATE MATERIALIZED VIEW late_view AS SELECT window_start, count(*) AS n FROM (SELECT b.*, date_bin('1 hour', b.ts, '1970-01-01') AS window_start FROM bids b WHERE isfinite(b.ts)) w GROUP BY window_start
CREATE MATERIALIZED VIEW late_view AS SELECT window_start, count(*) AS n FROM TUMBLE(bids, ts, '1 hour') GROUP BY window_start;
INSERT INTO bids VALUES (16, '2026-05-01 12:45', 1, 'ann');
