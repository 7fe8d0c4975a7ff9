-- string_agg maintained incrementally: per group, with ORDER BY (ASC, DESC,
-- NULLS FIRST/LAST, several keys), DISTINCT, FILTER, per-row delimiters,
-- bytea, NULL values and delimiters, duplicates, and groups that appear,
-- change and disappear.

CREATE TABLE tags (id int PRIMARY KEY, grp text, tag text, weight int, sep text, raw bytea);

CREATE MATERIALIZED VIEW by_grp AS
  SELECT grp,
         string_agg(tag, ',' ORDER BY tag) AS asc_tags,
         string_agg(tag, ';' ORDER BY tag DESC) AS desc_tags,
         string_agg(tag, '|' ORDER BY weight NULLS FIRST, tag) AS by_weight,
         string_agg(tag, '|' ORDER BY weight DESC NULLS LAST, id) AS by_weight_desc,
         string_agg(DISTINCT tag, '+' ORDER BY tag) AS distinct_tags,
         string_agg(tag, ',' ORDER BY id) FILTER (WHERE weight > 1) AS heavy,
         string_agg(tag, sep ORDER BY id) AS own_sep,
         string_agg(raw, '\x2c'::bytea ORDER BY id) AS raws,
         count(*) AS n
  FROM tags GROUP BY grp;

CREATE MATERIALIZED VIEW everything AS
  SELECT string_agg(grp || ':' || tag, ' ' ORDER BY grp, tag, id) AS all_tags, count(tag ORDER BY tag) AS n
  FROM tags;

INSERT INTO tags VALUES
  (1, 'a', 'red', 2, '-', '\x01'),
  (2, 'a', 'blue', 1, NULL, '\x02'),
  (3, 'a', 'green', NULL, '/', NULL),
  (4, 'b', 'red', 3, '-', '\x0304'),
  (5, 'b', 'red', 3, '-', '\x05'),
  (6, 'b', NULL, 1, '+', '\x06'),
  (7, NULL, 'orphan', 5, '~', '\x');

INSERT INTO tags VALUES (8, 'a', 'amber', 2, '=', '\xff');
UPDATE tags SET tag = 'zinc' WHERE id = 2;
UPDATE tags SET grp = 'b' WHERE id = 1;
UPDATE tags SET weight = NULL WHERE id = 4;
DELETE FROM tags WHERE id = 5;
INSERT INTO tags VALUES (9, 'c', 'solo', 1, ',', '\x09');
DELETE FROM tags WHERE grp = 'a';
UPDATE tags SET sep = NULL;

SELECT grp, string_agg(tag, ', ' ORDER BY tag NULLS FIRST) AS tags FROM tags GROUP BY grp ORDER BY grp;
SELECT string_agg(DISTINCT grp, '' ORDER BY grp) FROM tags;

DELETE FROM tags;
INSERT INTO tags VALUES (10, 'd', 'only', 1, '.', '\x0a');
