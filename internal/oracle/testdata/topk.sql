-- ORDER BY ... LIMIT k [OFFSET n] in materialized views and in subqueries.
--
-- PostgreSQL leaves the order of rows equal on every ORDER BY key open, so
-- which of them a LIMIT keeps is not determined; RockStream orders them by
-- the whole row. These scripts compare only determined results: the sort
-- keys are unique where the view shows other columns (id is unique in
-- every table here), or the views project only the sort key columns (then
-- every choice among ties gives the same rows), or ties do not cross the
-- k boundary.

CREATE TABLE s (id int PRIMARY KEY, score int, name text, grp text);

-- Unique keys (id breaks every tie), all directions and NULL placements.
CREATE MATERIALIZED VIEW top3 AS SELECT id, score, name FROM s ORDER BY score DESC, id LIMIT 3;
CREATE MATERIALIZED VIEW bottom2_off AS SELECT id, score FROM s ORDER BY score, id LIMIT 2 OFFSET 1;
CREATE MATERIALIZED VIEW nulls_first AS SELECT id, score FROM s ORDER BY score NULLS FIRST, id DESC LIMIT 3;
CREATE MATERIALIZED VIEW desc_nulls_last AS SELECT id, score FROM s ORDER BY score DESC NULLS LAST, id LIMIT 2;
-- Expressions as keys, a hidden key column.
CREATE MATERIALIZED VIEW by_expr AS SELECT id, name FROM s ORDER BY coalesce(score, 0) * -1 + id, id LIMIT 4;
CREATE MATERIALIZED VIEW hidden_key AS SELECT name FROM s ORDER BY id DESC LIMIT 2;
-- Only the sort key columns are shown: ties give the same rows.
CREATE MATERIALIZED VIEW keys_only AS SELECT score FROM s ORDER BY score LIMIT 4;
CREATE MATERIALIZED VIEW keys_only_desc AS SELECT score, grp FROM s ORDER BY grp DESC NULLS LAST, score NULLS FIRST LIMIT 3 OFFSET 2;
-- OFFSET alone.
CREATE MATERIALIZED VIEW skip2 AS SELECT id, score FROM s ORDER BY score, id OFFSET 2;
-- LIMIT in a subquery, aggregated and joined.
CREATE MATERIALIZED VIEW sub_sum AS SELECT count(*) AS n, sum(score) AS total FROM (SELECT score FROM s ORDER BY score DESC NULLS LAST LIMIT 3) t;
CREATE MATERIALIZED VIEW sub_join AS SELECT t.id, u.name FROM (SELECT id FROM s ORDER BY id LIMIT 2) t JOIN s u ON u.id = t.id + 1;
-- LIMIT over a grouped query, and over DISTINCT.
CREATE MATERIALIZED VIEW top_groups AS SELECT grp, sum(score) AS total FROM s GROUP BY grp ORDER BY grp NULLS FIRST LIMIT 2;
CREATE MATERIALIZED VIEW top_distinct AS SELECT DISTINCT score FROM s ORDER BY score DESC LIMIT 2;
-- LIMIT 0, and LIMIT without ORDER BY where every choice is the same.
CREATE MATERIALIZED VIEW none AS SELECT id FROM s ORDER BY id LIMIT 0;
CREATE MATERIALIZED VIEW count_capped AS SELECT count(*) AS n FROM (SELECT * FROM s LIMIT 3) t;

INSERT INTO s VALUES (1, 50, 'a', 'g1'), (2, 70, 'b', 'g1'), (3, 60, 'c', 'g2');
INSERT INTO s VALUES (4, NULL, 'd', 'g2'), (5, 70, 'e', NULL), (6, 10, 'f', 'g3');
INSERT INTO s VALUES (7, 90, 'g', 'g3');

-- Deleting a top row pulls the (k+1)-th row in.
DELETE FROM s WHERE id = 7;
-- Deleting several top rows at once pulls several in.
DELETE FROM s WHERE score >= 70;
-- A row inserted after the window changes nothing visible.
INSERT INTO s VALUES (8, 1, 'h', 'g1');
-- An update moving a row into and out of the window.
UPDATE s SET score = 100 WHERE id = 6;
UPDATE s SET score = 0 WHERE id = 6;
-- Updates within the window.
UPDATE s SET name = 'cc' WHERE id = 3;
UPDATE s SET score = score + 1 WHERE score IS NOT NULL;
-- NULL keys.
INSERT INTO s VALUES (9, NULL, 'i', NULL), (10, NULL, 'j', 'g4');
UPDATE s SET score = NULL WHERE id = 1;

-- Ties in sort keys that the key-only views show.
INSERT INTO s VALUES (11, 51, 'k', 'g1'), (12, 51, 'l', 'g1'), (13, 51, 'm', 'g2');

-- A delta that cancels within one transaction.
BEGIN;
INSERT INTO s VALUES (20, 1000, 'x', 'g9');
DELETE FROM s WHERE id = 20;
COMMIT;

-- A transaction that replaces the whole top.
BEGIN;
DELETE FROM s WHERE id IN (3, 11, 12);
INSERT INTO s VALUES (21, 500, 'y', 'g5'), (22, 400, 'z', 'g5');
UPDATE s SET score = 450 WHERE id = 13;
COMMIT;

-- Ad-hoc queries with the same constructs.
SELECT id, score FROM s ORDER BY score DESC NULLS LAST, id LIMIT 3 OFFSET 1;
SELECT * FROM (SELECT id, name FROM s ORDER BY id DESC LIMIT 4) t ORDER BY name LIMIT 2;
SELECT DISTINCT ON (grp) grp, id FROM s ORDER BY grp NULLS FIRST, id;
SELECT grp FROM s INTERSECT ALL SELECT grp FROM s WHERE score > 50 ORDER BY 1 NULLS FIRST;

-- Everything goes: every view is empty (count_capped and sub_sum show 0).
DELETE FROM s;
INSERT INTO s VALUES (30, 5, 'p', 'g1');
