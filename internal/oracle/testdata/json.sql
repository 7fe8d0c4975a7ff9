-- The json type: the text of a JSON document kept as written (whitespace,
-- key order, duplicate keys), checked on input; -> ->> #> #>> (the last
-- of duplicate keys counts), json_typeof, json_array_length, casts to and
-- from jsonb and text, and the builders to_json, json_build_object and
-- json_build_array. In maintained views under inserts, updates and
-- deletes, and ad hoc.

CREATE TABLE docs (id int PRIMARY KEY, d json, b jsonb, t text);

CREATE MATERIALIZED VIEW raw AS SELECT id, d FROM docs;
CREATE MATERIALIZED VIEW fields AS
  SELECT id, d -> 'a' AS a, d ->> 'a' AS a_text, d -> 1 AS second, d -> -1 AS last,
         d #> '{b,c}' AS bc, d #>> '{b,c,0}' AS bc0, json_typeof(d) AS kind
  FROM docs;
CREATE MATERIALIZED VIEW converted AS
  SELECT id, d::jsonb AS as_jsonb, b::json AS from_jsonb, d::text AS as_text, t::json AS from_text
  FROM docs WHERE t IS NULL OR t LIKE '{%' OR t LIKE '[%';
CREATE MATERIALIZED VIEW arrays AS
  SELECT id, json_array_length(d) AS n FROM docs WHERE json_typeof(d) = 'array';
CREATE MATERIALIZED VIEW built AS
  SELECT id, json_build_object('id', id, 'd', d, 'b', b, 't', t) AS o, json_build_array(id, d, t, b) AS a,
         to_json(t) AS tj, to_json(d) AS dj
  FROM docs;
CREATE MATERIALIZED VIEW grouped AS
  SELECT d ->> 'k' AS k, count(*) AS n, sum((d ->> 'v')::int) AS v FROM docs GROUP BY d ->> 'k';

-- json_agg and json_object_agg: array_agg of the members' json texts,
-- made into json (ORDER BY inside the call fixes the order, as in
-- PostgreSQL); json keeps duplicate keys.
CREATE MATERIALIZED VIEW aggs AS
  SELECT d ->> 'k' AS k, json_agg(d ORDER BY id) AS docs, json_agg(t ORDER BY id DESC) AS texts,
         json_object_agg(coalesce(t, 'none'), id ORDER BY id) AS by_t,
         json_agg(id ORDER BY id) FILTER (WHERE id > 2) AS late
  FROM docs GROUP BY d ->> 'k';
CREATE MATERIALIZED VIEW agg_all AS
  SELECT json_agg(b ORDER BY id) AS bs, json_object_agg(id, d ORDER BY id) AS ds FROM docs;

-- The set-returning functions, over the documents of their kind.
CREATE MATERIALIZED VIEW keys AS
  SELECT o.id, k FROM (SELECT id, d FROM docs WHERE json_typeof(d) = 'object') o, json_object_keys(o.d) k;
CREATE MATERIALIZED VIEW elems AS
  SELECT a.id, e.value, e.ordinality
  FROM (SELECT id, d FROM docs WHERE json_typeof(d) = 'array') a, json_array_elements_text(a.d) WITH ORDINALITY e;
CREATE MATERIALIZED VIEW raw_elems AS
  SELECT a.id, e.value, e.value -> 0 AS first, json_typeof(e.value) AS kind
  FROM (SELECT id, d FROM docs WHERE json_typeof(d) = 'array') a, json_array_elements(a.d) e;
CREATE MATERIALIZED VIEW members AS
  SELECT o.id, e.key, e.value, t.value AS text_value, t.ordinality
  FROM (SELECT id, d FROM docs WHERE json_typeof(d) = 'object') o, json_each(o.d) e,
       json_each_text(o.d) WITH ORDINALITY t
  WHERE t.key = e.key;
CREATE MATERIALIZED VIEW as_rows AS
  SELECT id, row_to_json(ROW(id, d, t, b)) AS r, row_to_json(ROW(id, t), true) AS pretty FROM docs;
CREATE MATERIALIZED VIEW paths AS
  SELECT id, json_extract_path(d, 'b', 'c') AS bc, json_extract_path_text(d, 'b', 'c', '0') AS bc0,
         json_extract_path_text(d, 'k') AS k
  FROM docs;

INSERT INTO docs VALUES
  (1, '{"a": [1,  2], "a": 3, "k": "x", "v": 1}', '{"z": 1, "y": [1, 2]}', '{"t":  true}'),
  (2, '  [1, {"b": "x\"y"}, null]  ', '[3]', NULL),
  (3, NULL, NULL, 'plain'),
  (4, '"just a string"', '"s"', '[ ]'),
  (5, '{"a": null, "b": {"c" : ["deep", 1.50e1]}, "k": "x", "v": 2}', 'null', '{}'),
  (6, '17.50', '{"n": 1.50}', NULL),
  (7, '{"k": "y", "v": 3}', '{}', '{"dup": 1, "dup": 2}');

UPDATE docs SET d = '{"a": "replaced",   "k": "y", "v": 4}' WHERE id = 1;
UPDATE docs SET t = d::text WHERE id IN (2, 5);
DELETE FROM docs WHERE id = 4;
INSERT INTO docs VALUES (8, '[]', '[]', '[]'), (9, '{"k": "x", "v": 10, "k": "z"}', NULL, NULL);
DELETE FROM docs WHERE d::jsonb @> '{"k": "y"}';

SELECT '{"a":1,"a":2}'::json -> 'a', '{"a": [1,  2] }'::json -> 'a', '{"a":"x\"y"}'::json ->> 'a';
SELECT '[1, {"b": 2}]'::json #> '{1,b}', '[1,2]'::json -> -1, '  {"a" :  1}  '::json, '[1,2]'::json -> 5;
SELECT '{"a":1,"a":2}'::json::jsonb, '{"b":1, "a":2}'::jsonb::json, json_typeof('[1]'), json_typeof(' "x" '),
       json_typeof('null'), json_typeof('-1e3'), json_typeof('false');
SELECT json_build_object('a', 1, 'b', 'x', 'c', NULL, 'd', '{"z":1}'::json, 'e', ARRAY[1, 2], 'f', '{"y": 2}'::jsonb);
SELECT json_build_array(1, 'a', NULL, true, 1.50, '[ 1 ]'::json, ARRAY['x', NULL]), json_build_array(), json_build_object();
SELECT to_json('a"b'::text), to_json(1.50), to_json(true), to_json(NULL::int), to_json(ARRAY[1, 2]),
       to_json(DATE '2026-01-02'), to_json(TIMESTAMP '2026-01-02 03:04:05');
SELECT pg_typeof('{}'::json), '{}'::json::text, '[1]'::text::json;
SELECT json_agg(x ORDER BY x DESC NULLS FIRST), json_object_agg(k, x ORDER BY x, k) FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'a')) v(x, k);
SELECT json_agg(x) FROM (VALUES (1)) v(x) WHERE false;
SELECT * FROM json_array_elements_text('[1, "a\"b", null, {"x":  1}, [ ]]');
SELECT json_object_keys('{"a": 1, "b": 2, "a": 3}');
SELECT * FROM json_array_elements('[1, {"a" :  2}, "x", null, [ ]]') WITH ORDINALITY;
SELECT * FROM json_each('{"a": "x", "a": null, "b": [1,  2], "c\"d": {"e" : 1}}') WITH ORDINALITY;
SELECT * FROM json_each_text('{"a": "x", "a": null, "b": [1,  2]}');
SELECT * FROM json_each(NULL);
SELECT row_to_json(ROW(1, 'x', NULL, '{"y" :  2}'::json, ARRAY[1, 2])), row_to_json(ROW('a"b'), false);
SELECT json_array_elements('[1, [ 2 ]]') -> 0, pg_typeof(json_array_elements('[1]'));
SELECT json_extract_path('{"a": {"b": [1,  2]}}', 'a', 'b'), json_extract_path_text('{"a": {"b": [1, "x"]}}', 'a', 'b', '1'),
       json_extract_path('{"a": 1}', 'z'), json_extract_path_text('[1]', NULL);

--! error 22P02
SELECT '{"a": }'::json;
--! error 22P02
INSERT INTO docs VALUES (10, '{bad');
--! error 42883
SELECT '{"a":1}'::json = '{"a":1}'::json;
--! error 42725
SELECT '{}' -> 'a';
--! error 22023
SELECT json_array_length('{}');
--! error 22023
SELECT json_array_length('1');
--! error 22023
SELECT json_build_object('a');
--! error 22023
SELECT json_build_object(NULL, 1);
--! error 42846
SELECT '{}'::json::int;
--! error 22023
SELECT json_object_agg(k, x) FROM (VALUES (1, NULL::text)) v(x, k);
--! error 22023
SELECT * FROM json_array_elements_text('{}');
--! error 22023
SELECT json_object_keys('[1]');
--! error 22023
SELECT * FROM json_array_elements('{}');
--! error 22023
SELECT * FROM json_each('[1]');
--! error 22023
SELECT * FROM json_each_text('1');
--! error 22023
SELECT * FROM json_object_keys('1');
--! rockstream-error 0A000
SELECT json_agg(DISTINCT id) FROM docs;
--! rockstream-error 0A000
SELECT row_to_json(docs) FROM docs;
-- json has no equality or ordering.
--! error 42883
SELECT DISTINCT d FROM docs;
--! error 42883
SELECT d, count(*) FROM docs GROUP BY d;
--! error 42883
SELECT d FROM docs ORDER BY d;
--! error 42883
SELECT d FROM docs UNION SELECT d FROM docs;
--! error 42883
SELECT count(DISTINCT d) FROM docs;
--! error 42883
SELECT max(d) FROM docs;
--! error 42883
CREATE MATERIALIZED VIEW bad AS SELECT d FROM docs GROUP BY ROLLUP (d);
SELECT d FROM docs UNION ALL SELECT d FROM docs;
SELECT count(d), string_agg(d::text, ',' ORDER BY id) FROM docs;
