-- Hypothetical-set aggregates maintained incrementally: rank, dense_rank,
-- percent_rank and cume_dist(args) WITHIN GROUP (ORDER BY keys) place the
-- hypothetical row among the group's rows, NULLs included (sorted by
-- NULLS FIRST/LAST), over one key and several, ASC and DESC, grouped and
-- global (where no rows give rank 1), with FILTER, peers, deletes and
-- updates that move rows around the hypothetical row and between groups.

CREATE TABLE h (id int PRIMARY KEY, g text, a int, b text, x float8);

CREATE MATERIALIZED VIEW by_g AS
  SELECT g,
         rank(3) WITHIN GROUP (ORDER BY a) AS r3,
         dense_rank(3) WITHIN GROUP (ORDER BY a) AS dr3,
         percent_rank(3) WITHIN GROUP (ORDER BY a) AS pr3,
         cume_dist(3) WITHIN GROUP (ORDER BY a) AS cd3,
         rank(3, 'm') WITHIN GROUP (ORDER BY a DESC, b NULLS FIRST) AS r_desc,
         cume_dist(NULL) WITHIN GROUP (ORDER BY a NULLS FIRST) AS cd_null,
         dense_rank(2.5) WITHIN GROUP (ORDER BY x DESC) FILTER (WHERE b IS NOT NULL) AS dr_x,
         count(*) AS n
  FROM h GROUP BY g;

CREATE MATERIALIZED VIEW whole AS
  SELECT rank(0) WITHIN GROUP (ORDER BY a) AS r0,
         percent_rank(5) WITHIN GROUP (ORDER BY a DESC) AS pr5,
         cume_dist('k') WITHIN GROUP (ORDER BY b) AS cdk,
         dense_rank(1, 1) WITHIN GROUP (ORDER BY a, x) AS dr11
  FROM h;

-- The hypothetical row may use the group keys.
CREATE MATERIALIZED VIEW by_a AS
  SELECT a, rank(a * 2) WITHIN GROUP (ORDER BY x) AS r, cume_dist(a) WITHIN GROUP (ORDER BY a) AS cd FROM h GROUP BY a;

-- In a correlated subquery: over no rows rank is 1 and cume_dist 1.
CREATE MATERIALIZED VIEW correlated AS
  SELECT id,
         (SELECT rank(3) WITHIN GROUP (ORDER BY h2.a) FROM h h2 WHERE h2.g = h.b) AS r,
         (SELECT cume_dist(3) WITHIN GROUP (ORDER BY h2.a) FROM h h2 WHERE h2.g = h.b) AS c,
         (SELECT percent_rank(3) WITHIN GROUP (ORDER BY h2.a) + count(*) FROM h h2 WHERE h2.g = h.b) AS pc
  FROM h;

INSERT INTO h VALUES
  (1, 'p', 1, 'a', 1.5),
  (2, 'p', 3, 'm', 2.5),
  (3, 'p', 3, 'z', 2.5),
  (4, 'p', NULL, NULL, NULL),
  (5, 'q', 7, 'k', 0),
  (6, 'q', 2, 'k', 9),
  (7, NULL, 3, NULL, 3);
INSERT INTO h VALUES (8, 'p', 5, 'b', 2.5), (9, 'q', 3, 'm', -1);
DELETE FROM h WHERE id = 2;
UPDATE h SET a = a + 1 WHERE g = 'p';
UPDATE h SET g = 'q' WHERE id IN (1, 4);
UPDATE h SET b = NULL WHERE id = 5;
INSERT INTO h SELECT 100 + s, 'r', s % 6, chr(97 + s % 20), s / 4.0 FROM generate_series(1, 40) s;
DELETE FROM h WHERE g = 'r' AND a = 3;
DELETE FROM h WHERE g = 'p';

SELECT g, rank(2) WITHIN GROUP (ORDER BY a NULLS FIRST), cume_dist(2) WITHIN GROUP (ORDER BY a DESC) FROM h GROUP BY g ORDER BY g;
SELECT rank(1) WITHIN GROUP (ORDER BY a), dense_rank(1) WITHIN GROUP (ORDER BY a), percent_rank(1) WITHIN GROUP (ORDER BY a), cume_dist(1) WITHIN GROUP (ORDER BY a) FROM h WHERE false;
--! error 42883
SELECT rank(1, 2) WITHIN GROUP (ORDER BY a) FROM h;
--! error 42804
SELECT rank(1) WITHIN GROUP (ORDER BY b) FROM h;
--! error 42809
SELECT rank(1) FROM h;

DELETE FROM h;
INSERT INTO h VALUES (10, 'p', 3, 'm', 3);
--! error 0A000
SELECT rank(1) WITHIN GROUP (ORDER BY a) OVER () FROM h;
