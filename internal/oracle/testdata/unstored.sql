-- Unmaterialized append-only tables (WITH (materialized = false)) keep no
-- rows, but every view over them must equal PostgreSQL's answer over the
-- same rows (which PostgreSQL stores) after every change: aggregates,
-- min/max and distinct over insert-only input, top-k, joins with a stored
-- table and between two unmaterialized tables (the join keeps its own
-- arrangement of each side), UNION ALL, windows.

--! postgres CREATE TABLE bids (auction int, bidder int, price int, channel text, at timestamp)
CREATE TABLE bids (auction int, bidder int, price int, channel text, at timestamp) APPEND ONLY WITH (materialized = false);
--! postgres CREATE TABLE asks (auction int, seller int, reserve int)
CREATE TABLE asks (auction int, seller int, reserve int) APPEND ONLY WITH (materialized = false);
CREATE TABLE people (id int PRIMARY KEY, name text);
INSERT INTO people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');

CREATE MATERIALIZED VIEW per_auction AS
  SELECT auction, count(*) AS n, sum(price) AS total, min(price) AS low, max(price) AS high, count(DISTINCT bidder) AS bidders
  FROM bids GROUP BY auction;
CREATE MATERIALIZED VIEW all_bids AS SELECT count(*) AS n, max(at) AS last FROM bids;
CREATE MATERIALIZED VIEW channels AS SELECT DISTINCT channel FROM bids;
CREATE MATERIALIZED VIEW top2 AS
  SELECT auction, bidder, price FROM (
    SELECT auction, bidder, price, row_number() OVER (PARTITION BY auction ORDER BY price DESC, bidder) AS r FROM bids) s
  WHERE r <= 2;
CREATE MATERIALIZED VIEW named AS
  SELECT p.name, b.auction, b.price FROM bids b JOIN people p ON p.id = b.bidder;
CREATE MATERIALIZED VIEW over_reserve AS
  SELECT a.auction, a.seller, b.bidder, b.price FROM bids b JOIN asks a ON a.auction = b.auction WHERE b.price >= a.reserve;
CREATE MATERIALIZED VIEW both_sides AS
  SELECT auction, price AS v FROM bids UNION ALL SELECT auction, reserve FROM asks;
CREATE MATERIALIZED VIEW filtered AS SELECT auction, price * 2 AS p2 FROM bids WHERE channel <> 'x' OR channel IS NULL;
CREATE MATERIALIZED VIEW no_bids AS
  SELECT a.auction FROM asks a WHERE NOT EXISTS (SELECT 1 FROM bids b WHERE b.auction = a.auction);

INSERT INTO bids VALUES (1, 1, 10, 'x', '2026-01-01 10:00'), (1, 2, 30, 'y', '2026-01-01 10:01'), (2, 1, 5, NULL, '2026-01-01 10:02');
INSERT INTO asks VALUES (1, 3, 20), (2, 2, 1), (3, 1, 100);
INSERT INTO bids VALUES (1, 1, 10, 'x', '2026-01-01 10:03'), (3, 3, 200, 'z', '2026-01-01 10:04'), (2, 9, 6, 'y', NULL);
BEGIN;
INSERT INTO bids VALUES (4, 2, 1, 'x', '2026-01-01 10:05');
INSERT INTO asks VALUES (4, 2, 0), (5, 1, 1);
COMMIT;
BEGIN;
INSERT INTO bids VALUES (5, 2, 2, 'w', '2026-01-01 10:06');
ROLLBACK;
INSERT INTO bids VALUES (1, 3, 40, 'y', '2026-01-01 10:07'), (5, 1, 3, NULL, '2026-01-01 10:08');
-- The stored side of a join changes under the unmaterialized one.
INSERT INTO people VALUES (9, 'dee');
UPDATE people SET name = 'bobby' WHERE id = 2;
DELETE FROM people WHERE id = 3;

-- What would need the rows fails and changes nothing.
--! rockstream-error 0A000
SELECT * FROM bids;
--! rockstream-error 0A000
SELECT count(*) FROM bids;
--! rockstream-error 0A000
SELECT b.price FROM bids b JOIN people p ON p.id = b.bidder;
--! rockstream-error 55000
CREATE MATERIALIZED VIEW late AS SELECT bidder, count(*) FROM bids GROUP BY bidder;
--! rockstream-error 42809
DELETE FROM bids WHERE auction = 1;
--! rockstream-error 42809
UPDATE bids SET price = 0;

INSERT INTO bids VALUES (6, 1, 7, 'x', '2026-01-01 10:09');
