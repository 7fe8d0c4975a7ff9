-- Array columns and the array constructs of expressions, maintained under
-- inserts, updates and deletes: text output (quoting, NULL elements, the
-- empty array), GROUP BY and DISTINCT over arrays (PostgreSQL's element-wise
-- order), joins on arrays, subscripts and slices, the array functions and
-- operators, op ANY/ALL (array) with NULLs, and ARRAY(subquery).

CREATE TABLE docs (id int PRIMARY KEY, owner text, tags text[], scores int[], prices numeric(6,2)[]);
CREATE TABLE owners (name text, wanted text[]);

CREATE MATERIALIZED VIEW doc_text AS
  SELECT id, tags, scores, prices, tags::text AS tags_text FROM docs;

CREATE MATERIALIZED VIEW by_tags AS
  SELECT tags, count(*) AS n, sum(id) AS ids FROM docs GROUP BY tags;

CREATE MATERIALIZED VIEW distinct_scores AS
  SELECT DISTINCT scores FROM docs;

CREATE MATERIALIZED VIEW extremes AS
  SELECT owner, max(tags) AS max_tags, min(scores) AS min_scores, count(DISTINCT scores) AS n_scores,
         max(prices) AS max_prices
  FROM docs GROUP BY owner;

CREATE MATERIALIZED VIEW parts AS
  SELECT id, tags[1] AS first_tag, tags[2:3] AS middle, tags[:1] AS head, scores[10] AS far,
         array_length(tags, 1) AS len, cardinality(tags) AS card, array_upper(scores, 1) AS upper,
         array_lower(scores, 1) AS lower, array_to_string(tags, ',') AS joined,
         array_to_string(tags, ',', '?') AS joined_nulls, array_position(tags, 'b') AS pos_b,
         array_position(tags, NULL) AS pos_null, array_remove(scores, 1) AS no_ones,
         array_append(tags, owner) AS appended, array_prepend(owner, tags) AS prepended,
         array_cat(scores, ARRAY[id]) AS cat, tags || owner AS tags_owner, scores || scores AS twice,
         ARRAY[id, id * 2, NULL] AS built, ARRAY[owner, 'x'] AS built_text
  FROM docs;

CREATE MATERIALIZED VIEW tests AS
  SELECT id,
         'b' = ANY(tags) AS has_b, 'b' <> ALL(tags) AS no_b,
         2 = ANY(scores) AS any2, 2 < ALL(scores) AS all_gt2,
         tags @> ARRAY['a'] AS contains_a, tags <@ ARRAY['a', 'b', 'c'] AS within,
         tags && ARRAY['c', 'z'] AS overlaps,
         scores = ARRAY[1, 2] AS eq12, scores < ARRAY[1, 2] AS lt12, scores >= ARRAY[1] AS ge1
  FROM docs;

CREATE MATERIALIZED VIEW matches AS
  SELECT d.id, o.name FROM docs d JOIN owners o ON d.tags = o.wanted;

CREATE MATERIALIZED VIEW wanted_docs AS
  SELECT o.name, ARRAY(SELECT d.id FROM docs d WHERE d.owner = o.name ORDER BY d.id DESC) AS ids
  FROM owners o;

-- The form psql's catalog queries use: a function of the row's own array.
CREATE MATERIALIZED VIEW mapped AS
  SELECT id,
         array_to_string(tags || ARRAY(SELECT 'opt.' || x FROM pg_catalog.unnest(tags) x), ', ') AS opts,
         ARRAY(SELECT upper(x) FROM unnest(tags) AS x WHERE x <> 'b' ORDER BY 1 DESC) AS upper_desc,
         ARRAY(SELECT n FROM unnest(scores) WITH ORDINALITY AS u(s, n) WHERE s IS NOT NULL ORDER BY s DESC, n) AS ranks
  FROM docs;

CREATE MATERIALIZED VIEW split AS
  SELECT id, string_to_array(owner, 'o') AS pieces, string_to_array(owner, 'o', 'b') AS pieces_null,
         string_to_array(owner, NULL) AS chars, string_to_array(owner, '') AS whole
  FROM docs;

INSERT INTO docs VALUES
  (1, 'bob', '{a,b}', '{1,2}', '{1.5,2.25}'),
  (2, 'alice', '{a,"x y",NULL,""}', '{2,3,NULL}', '{}'),
  (3, 'bob', NULL, NULL, NULL),
  (4, 'carol', '{}', '{}', '{0.1}'),
  (5, 'alice', '{a,b}', '{1}', '{1.50}'),
  (6, 'bob', '{"NULL","a,b","q\"uote","back\\slash","{br}"}', '{1,2,3}', '{-1}');

INSERT INTO owners VALUES ('bob', '{a,b}'), ('alice', '{}'), ('dave', NULL), ('carol', '{}');

UPDATE docs SET tags = '{c}' WHERE id = 1;
UPDATE docs SET scores = scores || 4 WHERE owner = 'bob';
DELETE FROM docs WHERE id = 5;
INSERT INTO docs VALUES (7, 'carol', ARRAY['a', 'b'], ARRAY[1, 2], ARRAY[2.5]);
UPDATE docs SET owner = 'dave' WHERE id = 4;
DELETE FROM owners WHERE name = 'alice';
INSERT INTO owners VALUES ('alice', '{a,b}');

SELECT ARRAY[1, 2] || 3, 0 || ARRAY[1], ARRAY[1.5, 2] AS mixed, ARRAY['a', NULL] AS texts, ARRAY[]::int[] AS empty;
SELECT '{1,2}'::int[] = '{1,2}', '{1,NULL}'::int[] = '{1,NULL}', '{}'::int[] < '{1}', '{1,2}'::int[] > '{1}';
SELECT 1 = ANY('{1,NULL}'::int[]), 3 = ANY('{1,NULL}'::int[]), 3 <> ALL('{1,NULL}'::int[]), NULL = ANY('{}'::int[]),
       NULL = ALL('{}'::int[]), 1 = ANY(NULL::int[]);
SELECT '{1,2,3}'::int[] @> '{2,2}', '{1,NULL}'::int[] @> '{NULL}', '{}'::int[] <@ '{1}', '{1,NULL}'::int[] && '{NULL}';
SELECT tags, count(*) FROM docs GROUP BY tags ORDER BY tags;
SELECT scores FROM docs ORDER BY scores DESC NULLS LAST;
SELECT CAST(scores AS text), CAST(scores AS bigint[]), CAST(prices AS int[]) FROM docs ORDER BY id;
SELECT '{1,2,NULL}'::text[]::int[], '{" 1 ",2}'::int[];
--! error 22P02
SELECT '{1,2'::int[];
--! error 22P02
SELECT '{a}'::int[];
--! error 42804
SELECT id[1] FROM docs;

DELETE FROM docs;
INSERT INTO docs VALUES (8, 'bob', '{z}', '{9}', '{9.99}');
