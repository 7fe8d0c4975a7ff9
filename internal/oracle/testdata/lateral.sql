-- LATERAL subqueries in FROM: comma, CROSS JOIN LATERAL, JOIN LATERAL ...
-- ON, LEFT JOIN LATERAL ... ON, aggregates per outer row, top-k per
-- group and set-returning functions over the row, in ad-hoc queries and
-- in materialized views maintained under inserts, updates and deletes of
-- both sides, with NULLs and duplicates.

CREATE TABLE grp (id int, name text, n int);
CREATE TABLE item (g int, v int, w text);

INSERT INTO grp VALUES (1, 'a', 2), (2, 'b', 0), (3, 'c', NULL), (NULL, 'n', 1), (1, 'a2', 5);
INSERT INTO item VALUES (1, 10, 'x'), (1, 20, 'y'), (1, 30, 'z'), (1, 20, 'y'), (2, 5, 'p'),
  (2, NULL, 'q'), (4, 7, 'r'), (NULL, 8, 's');

-- A select list over the outer row alone.
SELECT * FROM grp, LATERAL (SELECT grp.n + 1 AS z, grp.name || '!' AS bang) s ORDER BY id, name;
SELECT * FROM grp LEFT JOIN LATERAL (SELECT grp.n * 2 AS z WHERE grp.n > 1) s ON true ORDER BY id, name;
-- Correlated by equality, with conditions of its own and an ON.
SELECT g.id, g.name, s.v, s.w FROM grp g CROSS JOIN LATERAL (SELECT i.v, i.w FROM item i WHERE i.g = g.id AND i.v > 5) s
  ORDER BY 1, 2, 3, 4;
SELECT g.name, s.v, s.p FROM grp g JOIN LATERAL (SELECT i.v, i.v * g.n AS p FROM item i WHERE i.g = g.id) s ON s.p > 30
  ORDER BY 1, 2, 3;
SELECT g.name, s.v, s.n2 FROM grp g LEFT JOIN LATERAL (SELECT i.v, g.n AS n2 FROM item i WHERE i.g = g.id AND i.v < 25) s ON true
  ORDER BY 1, 2, 3;
SELECT g.name, s.v FROM grp g LEFT JOIN LATERAL (SELECT i.v FROM item i WHERE i.g = g.id) s ON s.v > g.n * 10
  ORDER BY 1, 2;
-- Correlated by other conditions.
SELECT g.name, s.v FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.v < g.n * 5) s ORDER BY 1, 2;
-- Aggregates: one row for every outer row, count(*) 0 without matches.
SELECT g.name, s.c, s.m, s.t FROM grp g, LATERAL (SELECT count(*) AS c, max(i.v) AS m, sum(i.v) AS t FROM item i WHERE i.g = g.id) s
  ORDER BY 1;
SELECT g.name, s.c FROM grp g JOIN LATERAL (SELECT count(i.v) AS c FROM item i WHERE i.g = g.id) s ON s.c < 2 ORDER BY 1;
SELECT g.name, s.c FROM grp g LEFT JOIN LATERAL (SELECT count(*) AS c FROM item i WHERE i.g = g.id) s ON s.c > 1 ORDER BY 1;
SELECT g.name, s.c, s.d FROM grp g LEFT JOIN LATERAL (SELECT count(i.w) AS c, count(i.w) AS d FROM item i WHERE i.g = g.id) s ON true ORDER BY 1;
SELECT g.name, s.w, s.c FROM grp g, LATERAL (SELECT i.w, count(*) AS c FROM item i WHERE i.g = g.id GROUP BY i.w) s ORDER BY 1, 2;
-- Top-k per group.
SELECT g.name, t.v, t.w FROM grp g, LATERAL (SELECT i.v, i.w FROM item i WHERE i.g = g.id ORDER BY i.v DESC, i.w LIMIT 2) t
  ORDER BY 1, 2, 3;
SELECT g.name, t.* FROM grp g LEFT JOIN LATERAL (SELECT i.w, i.v FROM item i WHERE i.g = g.id ORDER BY i.v NULLS FIRST, i.w LIMIT 2 OFFSET 1) AS t(word, val) ON true
  ORDER BY 1, 2, 3;
SELECT g.name, (SELECT i.v FROM item i WHERE i.g = g.id ORDER BY i.v LIMIT 1) AS least FROM grp g ORDER BY 1;
-- Lateral over lateral.
SELECT g.name, s.v, u.t FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.g = g.id) s, LATERAL (SELECT s.v + g.n AS t) u
  ORDER BY 1, 2, 3;
-- Set-returning functions read the row, with or without LATERAL.
SELECT g.name, k FROM grp g, LATERAL generate_series(1, g.n) AS k ORDER BY 1, 2;
SELECT g.name, k FROM grp g, generate_series(1, g.n) AS k ORDER BY 1, 2;
SELECT g.name, k FROM grp g LEFT JOIN LATERAL generate_series(1, g.n) AS k ON true ORDER BY 1, 2;

-- What the joins cannot carry, and what PostgreSQL refuses.
--! rockstream-error 0A000
SELECT * FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.g = g.id LIMIT g.n) s;
--! rockstream-error 0A000
SELECT * FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.g < g.id ORDER BY i.v LIMIT 1) s;
--! error 42P10
SELECT * FROM grp g RIGHT JOIN LATERAL (SELECT i.v FROM item i WHERE i.g = g.id) s ON true;
--! error 42601
SELECT * FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.g = g.id);
-- A LATERAL subquery on the left of a JOIN after a comma reads the items
-- before the comma: a0, (LATERAL ... a1 JOIN item a2 ON ...).
SELECT a0.name, a2.v FROM grp a0, LATERAL (SELECT s0.id AS l0 FROM grp s0 WHERE s0.id = a0.id AND s0.name <> a0.name) a1
  JOIN item a2 ON a1.l0 = a2.g ORDER BY 1, 2;
SELECT a0.name, a2.v, a3.w FROM grp a0, LATERAL (SELECT a0.id AS l0) a1 LEFT JOIN item a2 ON a1.l0 = a2.g
  JOIN item a3 ON a3.v = a2.v ORDER BY 1, 2, 3;
-- Its JOIN's ON may not read the items before the comma.
--! error 42P01
SELECT a0.name FROM grp a0, LATERAL (SELECT a0.id AS l0) a1 JOIN item a2 ON a0.id = a2.g;

CREATE MATERIALIZED VIEW lat_after_comma AS
  SELECT a0.name, a2.v FROM grp a0, LATERAL (SELECT a0.id AS l0, a0.n AS n0) a1 LEFT JOIN item a2 ON a1.l0 = a2.g AND a2.v > a1.n0;
CREATE MATERIALIZED VIEW lat_outer AS
  SELECT g.id, g.name, s.z FROM grp g, LATERAL (SELECT g.n + 1 AS z) s;
CREATE MATERIALIZED VIEW lat_eq AS
  SELECT g.id, g.name, s.v, s.w FROM grp g CROSS JOIN LATERAL (SELECT i.v, i.w FROM item i WHERE i.g = g.id AND i.v > 5) s;
CREATE MATERIALIZED VIEW lat_on AS
  SELECT g.name, s.v, s.p FROM grp g JOIN LATERAL (SELECT i.v, i.v * g.n AS p FROM item i WHERE i.g = g.id) s ON s.p > 30;
CREATE MATERIALIZED VIEW lat_left AS
  SELECT g.name, s.v, s.n2 FROM grp g LEFT JOIN LATERAL (SELECT i.v, g.n AS n2 FROM item i WHERE i.g = g.id AND i.v < 25) s ON true;
CREATE MATERIALIZED VIEW lat_residual AS
  SELECT g.name, s.v FROM grp g, LATERAL (SELECT i.v FROM item i WHERE i.v < g.n * 5) s;
CREATE MATERIALIZED VIEW lat_agg AS
  SELECT g.name, s.c, s.m, s.t FROM grp g, LATERAL (SELECT count(*) AS c, max(i.v) AS m, sum(i.v) AS t FROM item i WHERE i.g = g.id) s;
CREATE MATERIALIZED VIEW lat_agg_left_on AS
  SELECT g.name, s.c FROM grp g LEFT JOIN LATERAL (SELECT count(*) AS c FROM item i WHERE i.g = g.id) s ON s.c > 1;
CREATE MATERIALIZED VIEW lat_agg_left_true AS
  SELECT g.name, s.c, s.d FROM grp g JOIN grp h ON h.n = g.id LEFT JOIN LATERAL (SELECT count(i.w) AS c, count(i.w) AS d FROM item i WHERE i.g = h.id) s ON true;
CREATE MATERIALIZED VIEW lat_agg_on AS
  SELECT g.name, s.c FROM grp g JOIN LATERAL (SELECT count(i.v) AS c FROM item i WHERE i.g = g.id) s ON s.c < 2;
CREATE MATERIALIZED VIEW lat_topk AS
  SELECT g.name, t.v, t.w FROM grp g, LATERAL (SELECT i.v, i.w FROM item i WHERE i.g = g.id ORDER BY i.v DESC, i.w LIMIT 2) t;
CREATE MATERIALIZED VIEW lat_topk_left AS
  SELECT g.name, t.* FROM grp g LEFT JOIN LATERAL (SELECT i.w, i.v FROM item i WHERE i.g = g.id ORDER BY i.v NULLS FIRST, i.w LIMIT 2 OFFSET 1) AS t(word, val) ON true;
CREATE MATERIALIZED VIEW lat_least AS
  SELECT g.name, (SELECT i.v FROM item i WHERE i.g = g.id ORDER BY i.v LIMIT 1) AS least FROM grp g;
CREATE MATERIALIZED VIEW lat_srf AS
  SELECT g.name, k FROM grp g LEFT JOIN LATERAL generate_series(1, g.n) AS k ON true;

INSERT INTO item VALUES (1, 40, 'w'), (3, 1, 'a'), (3, 2, 'b'), (3, 3, 'c');
DELETE FROM item WHERE v = 30;
UPDATE item SET v = v + 1 WHERE g = 1 AND w = 'y';
INSERT INTO grp VALUES (4, 'd', 3), (3, 'c2', 1);
UPDATE grp SET n = 4 WHERE name = 'c';
UPDATE item SET g = 2 WHERE w = 'r';
DELETE FROM grp WHERE name = 'a';
INSERT INTO item VALUES (2, 5, 'p'), (NULL, NULL, NULL);
UPDATE grp SET id = NULL WHERE name = 'b';
DELETE FROM item WHERE g = 3 AND v < 3;
BEGIN;
INSERT INTO item VALUES (5, 1, 'e');
INSERT INTO grp VALUES (5, 'e', 2);
DELETE FROM item WHERE g = 5;
COMMIT;
DELETE FROM item;
INSERT INTO item VALUES (1, 1, 'k'), (1, 1, 'k'), (4, 9, 'm');
