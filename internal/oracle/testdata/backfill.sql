-- Views created over tables that already hold data (and have been
-- changed before): the view starts from the tables' current contents,
-- then follows later changes like any other view.

CREATE TABLE p (id int, grp text, v int, d date);
CREATE TABLE q (grp text, label text);

INSERT INTO p VALUES (1, 'a', 1, '2024-01-01'), (2, 'a', 2, '2024-01-02'), (3, 'b', 3, NULL), (4, NULL, NULL, '2024-01-04');
INSERT INTO p VALUES (5, 'c', 5, '2024-01-05'), (5, 'c', 5, '2024-01-05');
UPDATE p SET v = v * 10 WHERE grp = 'a';
DELETE FROM p WHERE id = 3;
INSERT INTO q VALUES ('a', 'alpha'), ('c', 'gamma'), ('c', 'gamma2'), ('d', 'delta');

CREATE MATERIALIZED VIEW bf_filter AS SELECT id, v FROM p WHERE v > 5;
CREATE MATERIALIZED VIEW bf_project AS SELECT id, v + 1 AS v1, grp IS NULL AS no_grp FROM p;
CREATE MATERIALIZED VIEW bf_agg AS SELECT grp, count(*) AS n, sum(v) AS s, min(d) AS first_d, max(v) AS max_v FROM p GROUP BY grp;
CREATE MATERIALIZED VIEW bf_total AS SELECT count(*) AS n, avg(v) AS avg_v FROM p;
CREATE MATERIALIZED VIEW bf_join AS SELECT p.id, q.label FROM p JOIN q ON p.grp = q.grp;
CREATE MATERIALIZED VIEW bf_distinct AS SELECT DISTINCT grp FROM p;
CREATE MATERIALIZED VIEW bf_union AS SELECT grp FROM p UNION SELECT grp FROM q;
CREATE MATERIALIZED VIEW bf_nested AS SELECT grp, n FROM (SELECT grp, count(*) AS n FROM p GROUP BY grp) s WHERE n > 1;

-- A view over a view that already holds data.
CREATE MATERIALIZED VIEW bf_on_view AS SELECT b.grp, b.n, q.label FROM bf_agg b JOIN q ON q.grp = b.grp;

INSERT INTO p VALUES (6, 'd', 6, '2024-01-06');
UPDATE p SET grp = 'a' WHERE id = 5;
DELETE FROM q WHERE label = 'alpha';
DELETE FROM p WHERE grp IS NULL;

-- Created after everything was deleted and refilled.
DELETE FROM p;
INSERT INTO p VALUES (7, 'e', 7, '2024-01-07');
CREATE MATERIALIZED VIEW bf_late AS SELECT grp, sum(v) AS s FROM p GROUP BY grp;
INSERT INTO p VALUES (8, 'e', 8, '2024-01-08');

-- Over an empty table.
CREATE TABLE empty_t (x int);
CREATE MATERIALIZED VIEW bf_empty AS SELECT x, count(*) AS n FROM empty_t GROUP BY x;
INSERT INTO empty_t VALUES (1), (1), (2);
