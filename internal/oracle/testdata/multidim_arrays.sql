-- Multidimensional arrays and arrays with lower bounds other than 1,
-- stored in tables and maintained in views under inserts, updates and
-- deletes: text output with dimension decorations, ARRAY[[..],..] and
-- ARRAY[ARRAY[..],..], subscripts a[i][j] and slices a[lo:hi][lo:hi],
-- array_ndims, array_dims, array_length, array_lower, array_upper,
-- cardinality, unnest (all elements), array_agg of arrays, array_cat and
-- || between dimensions, and PostgreSQL's order (elements, then
-- dimensions) in GROUP BY, DISTINCT, ORDER BY, min/max and joins.

CREATE TABLE grids (id int PRIMARY KEY, g int[], t text[][], n numeric[]);
CREATE TABLE wanted (name text, g int[]);

CREATE MATERIALIZED VIEW grid_text AS
  SELECT id, g, t, n, g::text AS g_text, t::text AS t_text, to_jsonb(g) AS g_jsonb, to_json(t)::text AS t_json
  FROM grids;

CREATE MATERIALIZED VIEW grid_stacked AS
  SELECT id % 2 AS parity, array_agg(ARRAY[id, id * 10] ORDER BY id) AS pairs FROM grids GROUP BY id % 2;

CREATE MATERIALIZED VIEW grid_shape AS
  SELECT id, array_ndims(g) AS nd, array_dims(g) AS dims, array_length(g, 1) AS len1,
         array_length(g, 2) AS len2, array_length(g, 3) AS len3, array_lower(g, 1) AS lo1,
         array_lower(g, 2) AS lo2, array_upper(g, 1) AS up1, array_upper(g, 2) AS up2,
         cardinality(g) AS card, array_dims(t) AS tdims
  FROM grids;

CREATE MATERIALIZED VIEW grid_parts AS
  SELECT id, g[1][1] AS g11, g[1][2] AS g12, g[2][1] AS g21, g[1] AS g1, g[0] AS g0, g[1][1][1] AS g111,
         g[1:1] AS row1, g[1:2][2:2] AS col2, g[2:][:1] AS tail, g[:][2] AS left2, g[1:1][1:1][1:1] AS deep,
         t[1][2] AS t12, t[2:2] AS trow, n[1:1][1] AS n1
  FROM grids;

CREATE MATERIALIZED VIEW grid_built AS
  SELECT id, ARRAY[g, g] AS twice, ARRAY[[id, id + 1], [id * 2, NULL]] AS lit,
         ARRAY[ARRAY[id], ARRAY[id + 10]] AS nested, g || g AS cat_same, array_cat(g, g[1:1]) AS cat_row,
         g || ARRAY[7, 8] AS cat_lower, ARRAY[id, id] || g AS cat_front
  FROM grids WHERE array_ndims(g) = 2 AND array_length(g, 2) = 2;

CREATE MATERIALIZED VIEW grid_groups AS
  SELECT g, count(*) AS c, sum(id) AS ids FROM grids GROUP BY g;

CREATE MATERIALIZED VIEW grid_distinct AS
  SELECT DISTINCT t FROM grids;

CREATE MATERIALIZED VIEW grid_extremes AS
  SELECT max(g) AS max_g, min(g) AS min_g, max(t) AS max_t, count(DISTINCT g) AS n_g FROM grids;

CREATE MATERIALIZED VIEW grid_elems AS
  SELECT id, x FROM grids, unnest(g) AS x;

CREATE MATERIALIZED VIEW grid_elems_ord AS
  SELECT id, x, k FROM grids, unnest(t) WITH ORDINALITY AS u(x, k);

CREATE MATERIALIZED VIEW grid_matches AS
  SELECT w.name, r.id FROM wanted w JOIN grids r ON r.g = w.g;

CREATE MATERIALIZED VIEW grid_tests AS
  SELECT id, g = '{{1,2},{3,4}}' AS eq, g < '{{1,2},{3,4}}' AS lt, g = '[0:1][1:2]={{1,2},{3,4}}' AS eq_lb,
         2 = ANY(g) AS any2, g @> '{4}' AS has4, g && '{{9}}' AS overlaps9, g IS DISTINCT FROM '{1,2,3,4}' AS distinct_flat
  FROM grids;

CREATE MATERIALIZED VIEW grid_rows AS
  SELECT array_agg(g ORDER BY id) AS stacked, count(*) AS c FROM grids WHERE array_ndims(g) = 1 AND array_length(g, 1) = 2;

INSERT INTO grids VALUES
  (1, '{{1,2},{3,4}}', '{{a,b},{c,d}}', '{{1.5},{2.25}}'),
  (2, '[0:1][1:2]={{1,2},{3,4}}', '{{"x y",NULL},{"",NULL}}', '{1.5,2.25}'),
  (3, '{1,2,3,4}', '{{{a}}}', '[2:3]={1.0,2}'),
  (4, '{{1,NULL},{NULL,4}}', NULL, NULL),
  (5, '{}', '{}', '{}'),
  (6, '{{{1,2},{3,4}},{{5,6},{7,8}}}', '{{"{}","q\"uote"},{"back\\slash",","}}', '{{{0}}}'),
  (7, '{5,6}', '{a,b}', '[-1:0]={3,4}'),
  (8, NULL, '{{b}}', '{{1},{2}}');

INSERT INTO wanted VALUES ('square', '{{1,2},{3,4}}'), ('shifted', '[0:1][1:2]={{1,2},{3,4}}'), ('flat', '{1,2,3,4}'),
  ('pair', '{5,6}'), ('none', NULL);

UPDATE grids SET g = '{{9,9},{9,9}}' WHERE id = 4;
UPDATE grids SET g = g || ARRAY[[5, 6]] WHERE id = 1;
INSERT INTO grids VALUES (9, ARRAY[[1, 2], [3, 4]], ARRAY[['a', 'b'], ['c', 'd']], ARRAY[[1.5], [2.25]]),
  (10, '{7,8}', '[1:1][0:0]={{z}}', '{{5}}');
DELETE FROM grids WHERE id = 2;
UPDATE grids SET t = '[0:0][0:1]={{a,b}}' WHERE id = 7;
DELETE FROM wanted WHERE name = 'flat';
INSERT INTO wanted VALUES ('again', '{{1,2},{3,4}}');

SELECT g FROM grids ORDER BY g, id;
SELECT g FROM grids ORDER BY g DESC NULLS FIRST, id;
SELECT t, count(*) FROM grids GROUP BY t ORDER BY t;
SELECT ARRAY[[1, 2], [3, 4]], ARRAY[ARRAY[1.5], ARRAY[2]], ARRAY[[['a']]];
SELECT ARRAY[NULL::int[], NULL::int[]], ARRAY['{}'::int[], '{}'], ARRAY['[0:1]={1,2}'::int[], '[0:1]={3,4}'];
SELECT ARRAY[[1, 2], [3, 4]]::text[], ARRAY[[1, 2]]::float8[], ARRAY[ARRAY['1', '2']]::int[];
--! error 2202E
SELECT ARRAY[[1, 2], [3]];
--! error 2202E
SELECT ARRAY[ARRAY[1, 2], '{}'];
--! error 2202E
SELECT ARRAY['[0:1]={1,2}'::int[], '{3,4}'];
SELECT '{{1,2},{3,4}}'::int[], '[0:1][-1:0]={{1,2},{3,4}}'::int[], '[3:4]={a,b}'::text[], '{{{{{{1}}}}}}'::int[];
--! error 22P02
SELECT '{{1,2},{3}}'::int[];
--! error 22P02
SELECT '[1:2][1:2]={{1,2}}'::int[];
--! error 54000
SELECT '{{{{{{{1}}}}}}}'::int[];
SELECT ('{{1,2},{3,4}}'::int[])[2][1], ('{{1,2},{3,4}}'::int[])[2], ('{{1,2},{3,4}}'::int[])[2:2][1:1],
       ('{{1,2},{3,4}}'::int[])[1:2][2], ('[0:1]={1,2}'::int[])[0], ('[0:1]={1,2}'::int[])[0:0],
       ('{{1,2},{3,4}}'::int[])[NULL][1], ('{{1,2},{3,4}}'::int[])[3:4][1:1], ('{{1,2},{3,4}}'::int[])[1:1][1:1][1:1];
SELECT array_ndims('{{1},{2}}'::int[]), array_dims('[0:1][2:2]={{1},{2}}'::int[]), array_length('{{1,2,3}}'::int[], 2),
       array_lower('[-5:-4]={1,2}'::int[], 1), array_upper('[-5:-4]={1,2}'::int[], 1), cardinality('{{1,2},{3,4}}'::int[]),
       array_ndims('{}'::int[]), array_dims('{}'::int[]), array_length('{{1}}'::int[], 0);
SELECT array_cat('{{1,2}}'::int[], '{{3,4}}'), array_cat('{1,2}'::int[], '{{3,4}}'), array_cat('{{1,2}}'::int[], '{3,4}'),
       array_cat('{}'::int[], '{{3,4}}'), array_cat('{{1}}'::int[], '{}'), '[0:1]={1,2}'::int[] || '{3}'::int[],
       '{1}'::int[] || '[0:1]={2,3}'::int[], array_append('[0:1]={1,2}'::int[], 3), array_prepend(0, '[5:5]={1}'::int[]),
       '{{1,2}}'::int[] || ARRAY[[3, 4], [5, 6]];
--! error 2202E
SELECT array_cat('{{1,2}}'::int[], '{{3}}');
--! error 2202E
SELECT array_cat('{{{1}}}'::int[], '{1}');
--! error 2202E
SELECT array_cat('{1,2}'::int[], '{{3}}');
--! error 22000
SELECT array_append('{{1}}'::int[], 2);
--! error 22000
SELECT 0 || '{{1}}'::int[];
SELECT '{{1,2},{3,4}}'::int[] = '{{1,2},{3,4}}', '{{1,2},{3,4}}'::int[] = '{1,2,3,4}', '{{1,2}}'::int[] < '{{1},{2}}',
       '[0:1]={1,2}'::int[] < '{1,2}', '[2:3]={1,2}'::int[] > '{1,2}', '{{1,2},{3,4}}'::int[] > '{1,2,3}',
       '{{1,2},{3,4}}'::int[] < '{1,2,3,5}', '[0:1]={1,2}'::int[] = '[0:1]={1,2}';
SELECT x FROM unnest('{{1,2},{3,4}}'::int[]) AS x;
SELECT * FROM unnest('[0:1][5:5]={{a},{b}}'::text[]) WITH ORDINALITY;
SELECT array_agg(x) FROM (VALUES ('{1,2}'::int[]), ('{3,4}')) v(x);
SELECT array_agg(x ORDER BY x DESC) FROM (VALUES ('{{1,2}}'::int[]), ('{{3,4}}')) v(x);
SELECT array_agg(x) FROM (VALUES ('[0:1]={1,2}'::int[]), ('[0:1]={3,4}')) v(x);
--! error 2202E
SELECT array_agg(x) FROM (VALUES ('{1,2}'::int[]), ('{3}')) v(x);
--! error 2202E
SELECT array_agg(x) FROM (VALUES ('{1,2}'::int[]), ('{}')) v(x);
--! error 22004
SELECT array_agg(x) FROM (VALUES ('{1,2}'::int[]), (NULL)) v(x);
SELECT ARRAY(SELECT ARRAY[x, x * 10] FROM unnest('{1,2,3}'::int[]) AS x);
SELECT array_to_string('{{1,2},{NULL,4}}'::int[], ',', '*'), '{{1,2},{3,4}}'::int[] @> '{4,1}', 3 = ANY('{{1,2},{3,4}}'::int[]);
--! error 0A000
SELECT array_position('{{1,2},{3,4}}'::int[], 3);
--! error 0A000
SELECT array_remove('{{1,2},{3,4}}'::int[], 3);
SELECT array_position('[0:2]={5,6,7}'::int[], 6), array_remove('[0:2]={5,6,7}'::int[], 6), array_positions('[3:5]={5,6,5}'::int[], 5);
SELECT generate_subscripts('[0:1][3:5]={{1,2,3},{4,5,6}}'::int[], 2), generate_subscripts('[0:1]={1,2}'::int[], 1, true);
SELECT generate_subscripts('{{1,2}}'::int[], 3) AS none;
SELECT to_json('{{1,2},{3,NULL}}'::int[]), to_jsonb('[0:1][1:1]={{a},{b}}'::text[]), json_build_array('{{1}}'::int[]);
SELECT * FROM grid_shape ORDER BY id;
SELECT x = '{1,2}'::int[] AS flat, x = '{{1,2}}'::int[] AS nested, x = '[0:1]={1,2}'::int[] AS shifted
FROM (VALUES ('{{1,2}}'::int[]), ('{1,2}'), ('[0:1]={1,2}')) v(x) ORDER BY x;
