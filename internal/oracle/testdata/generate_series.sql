-- generate_series over integers, numerics, timestamps and timestamptz, in
-- FROM (with ordinality, over the columns of earlier FROM items) and in
-- select lists, in queries and in materialized views maintained under
-- inserts, updates and deletes.

CREATE TABLE plans (id int PRIMARY KEY, lo numeric, hi numeric, step numeric, t0 timestamp, t1 timestamp, every interval, z0 timestamptz);

INSERT INTO plans VALUES
  (1, 1, 3, 0.5, '2026-01-01', '2026-01-03', '1 day', '2026-01-01 00:00+00'),
  (2, 10, 1, -2.25, '2026-01-31', '2026-05-01', '1 month', '2026-03-01 12:00+00'),
  (3, 0.1, 0.4, 0.1, '2026-01-01 00:00', '2026-01-01 01:00', '20 minutes', NULL),
  (4, NULL, 3, 1, NULL, '2026-01-01', '1 hour', '2026-01-01+00'),
  (5, 5, 1, 1, '2026-01-02', '2026-01-01', '1 day', '2026-06-01+00');

CREATE MATERIALIZED VIEW numeric_steps AS
  SELECT p.id, x, n FROM plans p, generate_series(p.lo, p.hi, p.step) WITH ORDINALITY AS g(x, n);

CREATE MATERIALIZED VIEW day_steps AS
  SELECT p.id, d FROM plans p CROSS JOIN LATERAL generate_series(p.t0, p.t1, p.every) AS d;

CREATE MATERIALIZED VIEW zoned_steps AS
  SELECT id, generate_series(z0, z0 + interval '2 days', interval '1 day') AS z FROM plans;

CREATE MATERIALIZED VIEW select_list AS
  SELECT id, generate_series(lo, hi) AS x, generate_series(1, 2) AS k FROM plans;

CREATE MATERIALIZED VIEW hourly AS
  SELECT date_trunc('day', h) AS day, count(*) AS hours
  FROM plans p, generate_series(p.t0, p.t0 + interval '30 hours', interval '6 hours') AS h GROUP BY 1;

--! unordered
SELECT * FROM numeric_steps;
--! unordered
SELECT * FROM day_steps;
--! unordered
SELECT * FROM zoned_steps;
--! unordered
SELECT * FROM select_list;

INSERT INTO plans VALUES (6, -1, 1, 0.75, '2026-02-27', '2026-03-02', '1 day', '2026-02-28+00');
UPDATE plans SET step = 1.5, every = '12 hours' WHERE id = 1;
UPDATE plans SET lo = 0 WHERE id = 4;
DELETE FROM plans WHERE id = 2;

SELECT * FROM generate_series(1.0, 2.0, 0.25) AS x;
SELECT x, n FROM generate_series(timestamp '2026-01-30', timestamp '2026-04-30', interval '1 month') WITH ORDINALITY AS t(x, n);
SELECT * FROM generate_series(timestamptz '2026-01-01 00:00+00', timestamptz '2026-01-01 02:00+00', interval '30 minutes');
SELECT generate_series(1, 3), generate_series(0.5, 1.5);
SELECT generate_series(date '2026-01-01', date '2026-01-03', interval '1 day');
SELECT count(*) FROM generate_series(5.5, 1);
SELECT * FROM generate_series(NULL::numeric, 3);

--! error 22023
SELECT * FROM generate_series(1, 3, 0);
--! error 22023
SELECT * FROM generate_series(1.0, 3, 0);
--! error 22023
SELECT * FROM generate_series('NaN'::numeric, 3);
--! error 22023
SELECT * FROM generate_series(1, 'Infinity'::numeric);
--! error 22023
SELECT * FROM generate_series(timestamp '2026-01-01', timestamp '2026-01-02', interval '0');
--! error 22023
SELECT generate_series(timestamptz '2026-01-01+00', timestamptz '2026-01-02+00', interval '1 month -30 days');
--! error 42883
SELECT * FROM generate_series('a'::text, 'b'::text);
