-- TUMBLE and HOP, compared with the same windows written in plain
-- PostgreSQL: date_bin from the Unix epoch for TUMBLE, generate_series of
-- window starts for HOP. Rows whose time is NULL or infinite are in no
-- window.

CREATE TABLE bids (id int, ts timestamp, tz timestamptz, price numeric(10,2), item text);
CREATE TABLE items (item text, category text);

--! postgres CREATE MATERIALIZED VIEW hourly AS SELECT window_start, window_end, count(*) AS n, sum(price) AS total, min(price) AS low, max(price) AS high, avg(price) AS mean FROM (SELECT b.*, date_bin('1 hour', b.ts, '1970-01-01') AS window_start, date_bin('1 hour', b.ts, '1970-01-01') + interval '1 hour' AS window_end FROM bids b WHERE isfinite(b.ts)) w GROUP BY window_start, window_end
CREATE MATERIALIZED VIEW hourly AS
  SELECT window_start, window_end, count(*) AS n, sum(price) AS total, min(price) AS low, max(price) AS high, avg(price) AS mean
  FROM TUMBLE(bids, ts, INTERVAL '1 hour')
  GROUP BY window_start, window_end;

--! postgres CREATE MATERIALIZED VIEW windowed AS SELECT b.id, b.item, date_bin('15 minutes', b.ts, '1970-01-01') AS window_start, date_bin('15 minutes', b.ts, '1970-01-01') + interval '15 minutes' AS window_end FROM bids b WHERE isfinite(b.ts)
CREATE MATERIALIZED VIEW windowed AS
  SELECT id, item, window_start, window_end FROM TUMBLE(bids, ts, '15 minutes');

--! postgres CREATE MATERIALIZED VIEW daily_tz AS SELECT window_start, item, count(*) AS n FROM (SELECT b.*, date_bin('1 day', b.tz, '1970-01-01 00:00:00+00') AS window_start FROM bids b WHERE isfinite(b.tz)) w GROUP BY window_start, item
CREATE MATERIALIZED VIEW daily_tz AS
  SELECT window_start, item, count(*) AS n FROM TUMBLE(bids, tz, '1 day') GROUP BY window_start, item;

--! postgres CREATE MATERIALIZED VIEW sliding AS SELECT window_end, item, count(*) AS n, sum(price) AS total FROM (SELECT b.*, ws AS window_start, ws + interval '30 minutes' AS window_end FROM (SELECT * FROM bids WHERE isfinite(ts)) b, generate_series(date_bin('10 minutes', b.ts, '1970-01-01') - interval '20 minutes', date_bin('10 minutes', b.ts, '1970-01-01'), interval '10 minutes') AS ws) h GROUP BY window_end, item
CREATE MATERIALIZED VIEW sliding AS
  SELECT window_end, item, count(*) AS n, sum(price) AS total
  FROM HOP(bids, ts, INTERVAL '10 minutes', INTERVAL '30 minutes')
  GROUP BY window_end, item;

--! postgres CREATE MATERIALIZED VIEW per_category AS SELECT w.window_start, i.category, count(*) AS n FROM (SELECT b.*, date_bin('1 hour', b.ts, '1970-01-01') AS window_start FROM bids b WHERE isfinite(b.ts)) w JOIN items i ON i.item = w.item GROUP BY w.window_start, i.category
CREATE MATERIALIZED VIEW per_category AS
  SELECT w.window_start, i.category, count(*) AS n
  FROM TUMBLE(bids, ts, '1 hour') AS w JOIN items i ON i.item = w.item
  GROUP BY w.window_start, i.category;

INSERT INTO bids VALUES
  (1, '2026-01-02 10:05', '2026-01-02 10:05+00', 10.50, 'a'),
  (2, '2026-01-02 10:55', '2026-01-02 23:59:59+00', 20, 'b'),
  (3, '2026-01-02 11:00', '2026-01-03 00:00+00', 5, 'a'),
  (4, '1969-12-31 23:45', '1969-12-31 12:00+00', 1, 'c'),
  (5, NULL, NULL, 100, 'a'),
  (6, 'infinity', '-infinity', 7, 'b'),
  (7, '2026-01-02 10:05', '2026-01-02 10:05+00', 10.50, 'a');
INSERT INTO items VALUES ('a', 'toys'), ('b', 'books'), ('c', 'toys');

-- Moving rows between windows, deleting, a duplicate going away.
UPDATE bids SET ts = ts + INTERVAL '1 hour' WHERE id = 2;
UPDATE bids SET tz = '2026-01-05 03:00+00' WHERE id = 3;
DELETE FROM bids WHERE id = 7;
UPDATE bids SET price = NULL WHERE id = 1;
UPDATE bids SET ts = '2026-01-02 10:40' WHERE id = 5;
UPDATE items SET category = 'games' WHERE item = 'a';

BEGIN;
INSERT INTO bids VALUES (8, '2026-01-02 12:01', '2026-01-02 12:01+00', 3, 'c');
DELETE FROM bids WHERE item = 'b';
INSERT INTO bids VALUES (9, '2026-01-02 12:59:59.999999', NULL, 4, 'b');
COMMIT;

BEGIN;
DELETE FROM bids;
ROLLBACK;

-- The windows as an ad-hoc query, and through a view.
--! postgres SELECT b.id, date_bin('1 hour', b.ts, '1970-01-01') + interval '1 hour' AS window_end FROM bids b WHERE isfinite(b.ts) AND b.price > 1
SELECT id, window_end FROM TUMBLE(bids, ts, '1 hour') WHERE price > 1;
CREATE VIEW priced AS SELECT id, ts, price FROM bids WHERE price IS NOT NULL;
--! postgres CREATE MATERIALIZED VIEW hop_view AS SELECT ws AS window_start, count(*) AS n FROM (SELECT * FROM priced WHERE isfinite(ts)) p, generate_series(date_bin('1 hour', p.ts, '1970-01-01') - interval '1 hour', date_bin('1 hour', p.ts, '1970-01-01'), interval '1 hour') AS ws GROUP BY ws
CREATE MATERIALIZED VIEW hop_view AS
  SELECT window_start, count(*) AS n FROM HOP(priced, ts, '1 hour', '2 hours') GROUP BY window_start;
INSERT INTO bids VALUES (10, '2026-01-02 13:30', NULL, 2, 'c'), (11, '2026-01-02 14:00', NULL, NULL, 'c');
DELETE FROM bids WHERE id = 8;

-- What is rejected.
--! rockstream-error 0A000
SELECT * FROM TUMBLE(bids, ts, '1 month');
--! rockstream-error 0A000
SELECT * FROM SESSION(bids, ts, INTERVAL '10 minutes');
--! rockstream-error 22023
SELECT * FROM HOP(bids, ts, '7 minutes', '1 hour');
--! rockstream-error 42804
SELECT * FROM TUMBLE(bids, price, '1 hour');
