-- array_agg maintained incrementally, with the ordered arrangement
-- string_agg uses: ORDER BY (ASC, DESC, NULLS FIRST/LAST, several keys),
-- DISTINCT, FILTER, NULL elements kept, numerics keeping their scale,
-- the whole table (NULL when it is empty) and groups that appear, change
-- and disappear; ARRAY(subquery) correlated with the outer row.

CREATE TABLE items (id int PRIMARY KEY, grp text, name text, qty int, price numeric, at timestamp);
CREATE TABLE groups (grp text, label text);

CREATE MATERIALIZED VIEW by_grp AS
  SELECT grp,
         array_agg(name ORDER BY name) AS names,
         array_agg(name ORDER BY name DESC NULLS LAST) AS names_desc,
         array_agg(qty ORDER BY qty NULLS FIRST, id) AS qtys,
         array_agg(DISTINCT qty ORDER BY qty) AS distinct_qtys,
         array_agg(price ORDER BY id) AS prices,
         array_agg(at ORDER BY at, id) AS times,
         array_agg(id ORDER BY id) FILTER (WHERE qty > 1) AS big,
         count(*) AS n
  FROM items GROUP BY grp;

CREATE MATERIALIZED VIEW everything AS
  SELECT array_agg(id ORDER BY id) AS ids, array_agg(DISTINCT grp ORDER BY grp) AS grps FROM items;

CREATE MATERIALIZED VIEW by_names AS
  SELECT array_agg(id ORDER BY id) AS ids, names FROM
    (SELECT grp, array_agg(name ORDER BY name) AS names FROM items GROUP BY grp) s
    JOIN items i ON i.grp = s.grp
  GROUP BY names;

CREATE MATERIALIZED VIEW labelled AS
  SELECT g.label,
         ARRAY(SELECT i.name FROM items i WHERE i.grp = g.grp ORDER BY i.id) AS names,
         ARRAY(SELECT i.qty FROM items i WHERE i.grp = g.grp ORDER BY i.qty DESC NULLS LAST, i.id) AS qtys
  FROM groups g;

INSERT INTO groups VALUES ('a', 'first'), ('b', 'second'), ('z', 'empty');

INSERT INTO items VALUES
  (1, 'a', 'red', 2, 1.50, '2026-01-01 10:00'),
  (2, 'a', 'blue', 1, 2.0, '2026-01-01 09:00'),
  (3, 'a', NULL, NULL, NULL, NULL),
  (4, 'b', 'red', 3, 1.5, '2026-01-02 00:00'),
  (5, 'b', 'red', 3, 1.500, '2026-01-02 00:00'),
  (6, NULL, 'orphan', 1, 0.1, '2026-01-03 00:00');

INSERT INTO items VALUES (7, 'a', 'amber', 2, 7, '2025-12-31 23:59:59.5');
UPDATE items SET name = 'zinc' WHERE id = 2;
UPDATE items SET grp = 'b' WHERE id = 1;
UPDATE items SET qty = NULL WHERE id = 4;
DELETE FROM items WHERE id = 5;
INSERT INTO groups VALUES ('c', 'third');
INSERT INTO items VALUES (8, 'c', 'solo', 5, 1e3, '2026-02-01');
DELETE FROM items WHERE grp = 'a';
UPDATE items SET price = price * 2;

SELECT grp, array_agg(name ORDER BY name NULLS FIRST) AS names FROM items GROUP BY grp ORDER BY grp;
SELECT array_agg(id ORDER BY id) FROM items WHERE id > 100;
-- Which of the equal numerics 3.0 and 3.00 DISTINCT keeps is unspecified
-- in PostgreSQL (RockStream keeps the smallest representation), so the
-- comparison fixes the scale.
SELECT array_agg(DISTINCT price::numeric(10,2) ORDER BY price::numeric(10,2)) FROM items;
--! error 42725
SELECT array_agg('x') FROM items;

DELETE FROM items;
INSERT INTO items VALUES (9, 'd', 'only', 1, 1, NULL);
DELETE FROM groups WHERE grp = 'c';
