-- jsonb: input normalisation (key order, duplicate keys, numbers,
-- whitespace, escapes), output, input errors, casts, every operator and
-- function, NULL and missing-key cases, and jsonb's btree order in ORDER
-- BY, GROUP BY, DISTINCT and joins; views over jsonb columns projecting
-- ->>, filtering with @> and ?, grouping by data->>'k' and by jsonb
-- values, kept under INSERT, UPDATE and DELETE.

SELECT '{"b":1, "a":2, "aa":3, "a":4}'::jsonb AS dup, '  [1,2 ,"x" , null,true,false ]'::jsonb AS arr,
       '1.50'::jsonb AS num, '1e2'::jsonb AS exp, '-0'::jsonb AS negzero, '1.5E-3'::jsonb AS small,
       '"\u00e9\ud83d\ude00\n\t\"\\\/"'::jsonb AS str, '{}'::jsonb AS eo, '[]'::jsonb AS ea,
       'null'::jsonb AS jnull, '"\u0001"'::jsonb AS ctl, '{"x": {"y": [ {}, [] ]}}'::jsonb AS nested;

--! error 22P02
SELECT '{"a":}'::jsonb;
--! error 22P02
SELECT '[1,]'::jsonb;
--! error 22P02
SELECT 'tru'::jsonb;
--! error 22P02
SELECT '01'::jsonb;
--! error 22P02
SELECT '"\x"'::jsonb;
--! error 22P02
SELECT '{"a" 1}'::jsonb;
--! error 22P02
SELECT '"\ud800"'::jsonb;
--! error 22P02
SELECT ''::jsonb;
--! error 22P02
SELECT '[1] 2'::jsonb;
--! error 22P05
SELECT '"\u0000"'::jsonb;

SELECT ('1'::jsonb)::int AS i, ('2.5'::jsonb)::int AS r, ('2.5'::jsonb)::numeric AS n, ('1e3'::jsonb)::bigint AS b,
       ('1.25'::jsonb)::float8 AS f, ('1.25'::jsonb)::real AS f4, ('7'::jsonb)::smallint AS s,
       ('true'::jsonb)::boolean AS t, ('{"a": 1}'::jsonb)::text AS txt, '[1, 2]'::text::jsonb AS back;
--! error 22023
SELECT ('"1"'::jsonb)::int;
--! error 22023
SELECT ('[1]'::jsonb)::numeric;
--! error 22023
SELECT ('1'::jsonb)::boolean;
--! error 22023
SELECT ('null'::jsonb)::int;
--! error 22003
SELECT ('3000000000'::jsonb)::int;
--! error 42846
SELECT ('1'::jsonb)::date;

SELECT '{"a": {"b": [10, 20, {"c": "x"}]}, "n": null}'::jsonb -> 'a' AS a,
       '{"a": 1}'::jsonb -> 'z' AS missing, '[1, 2, 3]'::jsonb -> 1 AS one, '[1, 2, 3]'::jsonb -> -1 AS last,
       '[1, 2, 3]'::jsonb -> 5 AS past, '{"a": 1}'::jsonb -> 0 AS obj_idx, '[1]'::jsonb -> 'a' AS arr_key,
       '5'::jsonb -> 'a' AS scalar_key, '{"a": "s", "n": null, "o": {"p": 1}}'::jsonb ->> 'a' AS s,
       '{"n": null}'::jsonb ->> 'n' AS n, '{"n": null}'::jsonb -> 'n' AS jn, '{"o": {"p": 1}}'::jsonb ->> 'o' AS o,
       '["x", true]'::jsonb ->> 0 AS x, '["x", true]'::jsonb ->> 1 AS t;
SELECT '1'::jsonb -> 0 AS a, '"x"'::jsonb -> -1 AS b, '"x"'::jsonb ->> 0 AS c, '1'::jsonb -> 1 AS d, '1'::jsonb #> '{0}' AS e,
       '1'::jsonb #>> '{0}' AS f, '{"a": 5}'::jsonb #> '{a,0}' AS g, '{"a": 5}'::jsonb -> 'a' -> 0 AS h,
       jsonb_extract_path('3', '0') AS i, '[[1]]'::jsonb #> '{0,0,0}' AS j, 'null'::jsonb ->> 0 AS k;

SELECT j #> '{a,b,2,c}' AS deep, j #>> '{a,b,2,c}' AS deep_text, j #> '{a,b,-1}' AS neg, j #> '{a,b,x}' AS bad_idx,
       j #> '{}' AS whole, j #>> '{a,b}' AS arr_text, j #> '{a,zz}' AS missing, j #> ARRAY['a', NULL] AS null_step,
       jsonb_extract_path(j, 'a', 'b', '0') AS ep, jsonb_extract_path_text(j, 'a', 'b', '1') AS ept,
       jsonb_extract_path(j, 'nope') AS ep_missing
FROM (SELECT '{"a": {"b": [10, 20, {"c": "x"}]}}'::jsonb AS j) s;

SELECT '{"a": 1, "b": {"c": [1, 2, 3]}}'::jsonb @> '{"b": {"c": [3, 1]}}' AS c1,
       '{"a": 1}'::jsonb @> '{"a": 1, "b": 2}' AS c2, '[1, 2, [3, 4]]'::jsonb @> '[[4]]' AS c3,
       '[1, 2, [3, 4]]'::jsonb @> '[4]' AS c4, '[1, 2]'::jsonb @> '1' AS c5, '1'::jsonb @> '[1]' AS c6,
       '"a"'::jsonb @> '"a"' AS c7, '{"a": [1, 2]}'::jsonb @> '{"a": 1}' AS c8, '{}'::jsonb @> '{}' AS c9,
       '[]'::jsonb @> '{}' AS c10, '{"a": 1.0}'::jsonb @> '{"a": 1}' AS c11, '[{"a": 1, "b": 2}]'::jsonb @> '[{"a": 1}]' AS c12,
       '{"b": {"c": [3]}}'::jsonb <@ '{"a": 1, "b": {"c": [1, 2, 3]}}' AS c13, '[1, 1]'::jsonb <@ '[1]' AS c14;

SELECT '{"a": 1, "b": null}'::jsonb ? 'b' AS e1, '{"a": {"c": 1}}'::jsonb ? 'c' AS e2, '["a", "b", 1]'::jsonb ? 'b' AS e3,
       '["a", "b", 1]'::jsonb ? '1' AS e4, '"a"'::jsonb ? 'a' AS e5, '{"a": 1, "b": 2}'::jsonb ?| ARRAY['x', 'b'] AS e6,
       '{"a": 1, "b": 2}'::jsonb ?& ARRAY['a', 'b'] AS e7, '{"a": 1}'::jsonb ?& ARRAY['a', 'z'] AS e8,
       '{"a": 1}'::jsonb ?| ARRAY[NULL, 'a'] AS e9, '{"a": 1}'::jsonb ?& ARRAY['a', NULL] AS e10,
       '{"a": 1}'::jsonb ?| '{}'::text[] AS e11, '{"a": 1}'::jsonb ?& '{}'::text[] AS e12, jsonb_exists('{"k": 1}', 'k') AS e13;

SELECT '{"a": 1, "b": 2}'::jsonb || '{"b": 3, "c": 4}' AS o, '[1, 2]'::jsonb || '[3]' AS a, '[1]'::jsonb || '{"a": 1}' AS ao,
       '{"a": 1}'::jsonb || '[1]' AS oa, '1'::jsonb || '2' AS ss, '[1]'::jsonb || '"x"' AS as2, '{"a": 1}'::jsonb || '5' AS os,
       '[]'::jsonb || '[]' AS ee;

SELECT '{"a": 1, "b": 2}'::jsonb - 'a' AS d1, '["a", "b", "a", 1]'::jsonb - 'a' AS d2, '{"a": 1}'::jsonb - 'z' AS d3,
       '[1, 2, 3]'::jsonb - 1 AS d4, '[1, 2, 3]'::jsonb - -1 AS d5, '[1, 2, 3]'::jsonb - 7 AS d6,
       '{"a": 1, "b": 2, "c": 3}'::jsonb - ARRAY['a', 'c'] AS d7, '["x", "y"]'::jsonb - ARRAY['y', NULL] AS d8,
       '{"a": {"b": [1, 2, {"c": 3}]}}'::jsonb #- '{a,b,2,c}' AS d9, '{"a": {"b": [1, 2]}}'::jsonb #- '{a,b,-1}' AS d10,
       '{"a": 1}'::jsonb #- '{z,y}' AS d11, '[1, 2]'::jsonb #- '{}' AS d12, '{"a": 1}'::jsonb #- '{a,0}' AS d13;
--! error 22023
SELECT '1'::jsonb - 'a';
--! error 22023
SELECT '{"a": 1}'::jsonb - 0;
--! error 22023
SELECT '"x"'::jsonb - 0;
--! error 22023
SELECT '3'::jsonb #- '{a}';
--! error 22P02
SELECT '[1, 2]'::jsonb #- '{x}';

SELECT jsonb_typeof('{}') AS t1, jsonb_typeof('[]') AS t2, jsonb_typeof('"s"') AS t3, jsonb_typeof('1.5') AS t4,
       jsonb_typeof('false') AS t5, jsonb_typeof('null') AS t6, jsonb_typeof(NULL) AS t7,
       jsonb_array_length('[1, [2, 3], {}]') AS l1, jsonb_array_length('[]') AS l2,
       jsonb_strip_nulls('{"a": null, "b": [null, {"c": null, "d": 1}], "e": {"f": null}}') AS sn,
       jsonb_strip_nulls('[null]') AS sn2;
--! error 22023
SELECT jsonb_array_length('{"a": 1}');
--! error 22023
SELECT jsonb_array_length('1');

SELECT jsonb_pretty('{"a": [], "b": {}, "c": [1, {"d": null, "e": "x"}]}') AS p1, jsonb_pretty('[]') AS p2,
       jsonb_pretty('1') AS p3, jsonb_pretty('{"a": {"b": [true]}}') AS p4;

SELECT jsonb_set('{"a": 1, "b": [1, 2]}', '{b,0}', '"x"') AS s1, jsonb_set('{"a": 1}', '{c}', '3') AS s2,
       jsonb_set('{"a": 1}', '{c}', '3', false) AS s3, jsonb_set('{"a": {"b": 1}}', '{a,b}', '{"z": null}') AS s4,
       jsonb_set('[1, 2]', '{5}', '9') AS s5, jsonb_set('[1, 2]', '{-5}', '9') AS s6, jsonb_set('[1, 2]', '{-1}', '9') AS s7,
       jsonb_set('{"a": 1}', '{x,y}', '2') AS s8, jsonb_set('{"a": 5}', '{a,b}', '2') AS s9, jsonb_set('[]', '{0}', '1') AS s10,
       jsonb_set('{"a": 1}', '{}', '2') AS s11;
SELECT jsonb_insert('{"a": [1, 2]}', '{a,1}', '"x"') AS i1, jsonb_insert('{"a": [1, 2]}', '{a,1}', '"x"', true) AS i2,
       jsonb_insert('{"a": [1, 2]}', '{a,-1}', '"x"', true) AS i3, jsonb_insert('{"a": [1, 2]}', '{a,9}', '"x"') AS i4,
       jsonb_insert('{"a": 1}', '{b}', '2') AS i5, jsonb_insert('[]', '{0}', '1') AS i6;
--! error 22023
SELECT jsonb_insert('{"a": 1}', '{a}', '2');
--! error 22023
SELECT jsonb_set('1', '{a}', '2');
--! error 22P02
SELECT jsonb_set('[1]', '{a}', '2');
--! error 22004
SELECT jsonb_set('{"a": 1}', ARRAY['a', NULL], '2');

SELECT jsonb_build_object('a', 1, 'b', 'text', 'c', NULL, 'd', ARRAY[1, 2], 'e', 1.50, 'f', true, 'a', 2) AS bo,
       jsonb_build_object() AS bo_empty, jsonb_build_object(1, 'x', 2.5, 'y', false, 'z') AS bo_keys,
       jsonb_build_array(1, 'a', NULL, true, '{"x": 1}'::jsonb, ARRAY['p', NULL]) AS ba, jsonb_build_array() AS ba_empty,
       jsonb_build_object('d', '2026-01-02'::date, 't', '2026-01-02 03:04:05.5'::timestamp,
                          'tz', '2026-01-02 03:04:05'::timestamptz) AS times;
--! error 22023
SELECT jsonb_build_object('a');
--! error 22023
SELECT jsonb_build_object(NULL::text, 1);
--! error 22023
SELECT jsonb_build_object(ARRAY[1], 1);

SELECT to_jsonb(1) AS i, to_jsonb(1.50) AS n, to_jsonb('NaN'::numeric) AS nan, to_jsonb(1e20::float8) AS f,
       to_jsonb('Infinity'::float8) AS inf, to_jsonb(1.5::real) AS r, to_jsonb('x"y'::text) AS t, to_jsonb('v'::varchar) AS v,
       to_jsonb(true) AS b, to_jsonb('2026-01-02'::date) AS d, to_jsonb('2026-01-02 03:04:05.123'::timestamp) AS ts,
       to_jsonb('2026-01-02 03:04:05'::timestamptz) AS tz, to_jsonb('infinity'::timestamp) AS tsinf,
       to_jsonb('1 day 02:00'::interval) AS iv, to_jsonb('\x0102'::bytea) AS by, to_jsonb(ARRAY[1, NULL, 3]) AS arr,
       to_jsonb('{}'::text[]) AS earr, to_jsonb('{"a": [1]}'::jsonb) AS j, to_jsonb(NULL::int) AS nul,
       to_jsonb(ARRAY['2026-01-02'::date]) AS darr;
--! error 42804
SELECT to_jsonb('abc');

SELECT '1'::jsonb > '[]'::jsonb AS q1, '1'::jsonb < '[0]'::jsonb AS q2, '{"b": 1}'::jsonb > '{"aa": 1}'::jsonb AS q3,
       '1.0'::jsonb = '1'::jsonb AS q4, 'null'::jsonb < '""'::jsonb AS q5, '"z"'::jsonb < '0'::jsonb AS q6,
       '9'::jsonb < 'false'::jsonb AS q7, '[1, 2]'::jsonb > '[3]'::jsonb AS q8, '{"a": 1}'::jsonb <> '{"a": 2}'::jsonb AS q9;

CREATE TABLE docs (id int PRIMARY KEY, data jsonb, tag text);
CREATE TABLE kinds (k jsonb, label text);

INSERT INTO docs VALUES
  (1, '{"name": "ann", "age": 31, "tags": ["a", "b"], "addr": {"city": "Oslo"}}', 'x'),
  (2, '{"name": "bob", "age": 25, "tags": ["b"], "active": true}', 'y'),
  (3, '{"name": "cy", "tags": [], "addr": {"city": "Rome", "zip": "00100"}}', 'x'),
  (4, '[1, 2, 3]', 'z'),
  (5, '"just a string"', 'z'),
  (6, 'null', 'z'),
  (7, NULL, NULL),
  (8, '{"name": "ann", "age": 31.0}', 'y'),
  (9, '42', 'x'),
  (10, '{}', 'y'),
  (11, '[]', 'x'),
  (12, 'true', 'y');
INSERT INTO kinds VALUES ('{"name": "ann"}', 'ann'), ('"just a string"', 'string'), ('[1, 2, 3]', 'arr'), ('null', 'null'), (NULL, 'none');

CREATE MATERIALIZED VIEW doc_fields AS
  SELECT id, data ->> 'name' AS name, (data ->> 'age')::numeric AS age, data -> 'tags' AS tags, data #>> '{addr,city}' AS city,
         data -> 'tags' -> 0 AS first_tag, jsonb_typeof(data) AS kind, data -> 1 AS second, data ? 'age' AS has_age
  FROM docs;

CREATE MATERIALIZED VIEW in_b AS
  SELECT id, data FROM docs WHERE data @> '{"tags": ["b"]}';

CREATE MATERIALIZED VIEW with_addr AS
  SELECT id, data -> 'addr' AS addr FROM docs WHERE data ? 'addr';

CREATE MATERIALIZED VIEW by_name AS
  SELECT data ->> 'name' AS name, count(*) AS n, sum(id) AS ids FROM docs GROUP BY data ->> 'name';

CREATE MATERIALIZED VIEW by_value AS
  SELECT data, count(*) AS n, min(id) AS first FROM docs GROUP BY data;

CREATE MATERIALIZED VIEW distinct_tags AS
  SELECT DISTINCT data -> 'tags' AS tags FROM docs;

CREATE MATERIALIZED VIEW kind_matches AS
  SELECT d.id, k.label FROM docs d JOIN kinds k ON d.data = k.k;

CREATE MATERIALIZED VIEW contained AS
  SELECT d.id, k.label FROM docs d JOIN kinds k ON d.data @> k.k;

CREATE MATERIALIZED VIEW extremes AS
  SELECT tag, max(data ->> 'name') AS max_name, count(DISTINCT data -> 'tags') AS n_tags FROM docs GROUP BY tag;

CREATE MATERIALIZED VIEW tag_rows AS
  SELECT d.id, t.value AS t FROM docs d, jsonb_array_elements(d.data -> 'tags') AS t;

CREATE MATERIALIZED VIEW tag_texts AS
  SELECT d.id, t.value AS t FROM docs d CROSS JOIN LATERAL jsonb_array_elements_text(d.data -> 'tags') AS t;

CREATE MATERIALIZED VIEW key_counts AS
  SELECT k, count(*) AS n FROM docs d, jsonb_object_keys(CASE WHEN jsonb_typeof(d.data) = 'object' THEN d.data END) AS k GROUP BY k;

CREATE MATERIALIZED VIEW keys_select AS
  SELECT id, jsonb_object_keys(data -> 'addr') AS key FROM docs;

CREATE MATERIALIZED VIEW edited AS
  SELECT id, data || jsonb_build_object('id', id) AS tagged, data - 'tags' AS untagged,
         jsonb_set(CASE WHEN jsonb_typeof(data) = 'object' THEN data END, '{addr,city}', to_jsonb(tag)) AS moved,
         jsonb_strip_nulls(data) AS stripped, to_jsonb(tag) AS jtag, jsonb_build_array(id, data -> 'age') AS pair
  FROM docs WHERE jsonb_typeof(data) IN ('object', 'array');

SELECT id, data FROM docs ORDER BY data, id;
SELECT id, data FROM docs ORDER BY data DESC, id;
SELECT DISTINCT data -> 'age' AS age FROM docs ORDER BY 1;
SELECT d.id, e.v FROM (SELECT id, data FROM docs WHERE jsonb_typeof(data) = 'array') d, jsonb_array_elements(d.data) AS e(v) ORDER BY 1, 2;
SELECT * FROM jsonb_array_elements('[1, "a", null, {"b": 2}]');
SELECT * FROM jsonb_array_elements_text('[1, "a", null, {"b": 2}]') AS x(v);
SELECT * FROM jsonb_object_keys('{"b": 1, "a": 2, "aa": 3}') AS k;
SELECT jsonb_array_elements('[1, 2]') AS e, jsonb_array_elements_text('["x"]') AS t;
--! error 22023
SELECT * FROM jsonb_array_elements('{"a": 1}');
--! error 22023
SELECT * FROM jsonb_array_elements('1');
--! error 22023
SELECT * FROM jsonb_object_keys('[1]');

UPDATE docs SET data = jsonb_set(data, '{tags}', data -> 'tags' || '["c"]') WHERE id IN (1, 3);
UPDATE docs SET data = data - 'age' WHERE id = 2;
UPDATE docs SET data = '{"name": "bob", "tags": ["b", "z"]}' WHERE id = 8;
INSERT INTO docs VALUES (13, '{"name": "dee", "tags": ["b"], "addr": {"city": "Oslo"}}', 'x'), (14, '[1, 2, 3]', 'z');
DELETE FROM docs WHERE id IN (4, 9);
UPDATE docs SET data = data || '{"age": 40}' WHERE jsonb_typeof(data) = 'object' AND data ->> 'name' = 'ann';
DELETE FROM docs WHERE data @> '{"name": "bob"}';
INSERT INTO kinds VALUES ('{"name": "dee"}', 'dee');
UPDATE docs SET data = NULL WHERE id = 5;
DELETE FROM kinds WHERE label = 'arr';

SELECT * FROM jsonb_each('{"b": [1, 2], "a": null, "c": "x"}');
SELECT * FROM jsonb_each_text('{"b": [1, 2], "a": null, "c": "x"}') WITH ORDINALITY AS e(k, v, n);
SELECT e.key, e.value FROM jsonb_each('{}') AS e;
--! error 22023
SELECT * FROM jsonb_each('[1]');
--! error 22023
SELECT * FROM jsonb_each_text('1');
--! rockstream-error 0A000
SELECT jsonb_each('{"a": 1}');

CREATE MATERIALIZED VIEW aggregated AS
  SELECT tag, jsonb_agg(data ORDER BY id) AS docs_json, jsonb_agg(id ORDER BY id DESC) FILTER (WHERE id > 2) AS ids,
         jsonb_object_agg(id, data -> 'name' ORDER BY id) AS names
  FROM docs GROUP BY tag;

CREATE MATERIALIZED VIEW pairs AS
  SELECT d.id, e.key, e.value, jsonb_typeof(e.value) AS kind FROM docs d, jsonb_each(d.data -> 'addr') AS e;

CREATE MATERIALIZED VIEW pair_counts AS
  SELECT t.key, count(*) AS n, max(t.value) AS longest
  FROM docs d CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(d.data) = 'object' THEN d.data END) AS t
  WHERE t.key <> 'tags' GROUP BY t.key;

CREATE MATERIALIZED VIEW pair_join AS
  SELECT d.id, p.k, p.v FROM docs d JOIN LATERAL jsonb_each(d.data -> 'addr') WITH ORDINALITY AS p(k, v, n) ON p.k = 'city' AND p.n > 0;
SELECT jsonb_agg(x ORDER BY x) AS a, jsonb_agg(x ORDER BY x DESC) FILTER (WHERE x > 1) AS f,
       jsonb_object_agg(k, x ORDER BY x) AS o, jsonb_agg(ARRAY[x, x] ORDER BY x) AS arrs,
       jsonb_object_agg(x, k ORDER BY x) FILTER (WHERE x IS NOT NULL) AS numkeys
FROM (VALUES (1, 'a'), (3, 'b'), (2, 'a'), (NULL, 'c')) t(x, k);
SELECT jsonb_agg(x) AS a, jsonb_object_agg(x, x) AS o FROM (VALUES (1)) t(x) WHERE false;
--! error 22023
SELECT jsonb_object_agg(k, 1) FROM (VALUES ('a'), (NULL)) t(k);
--! error 42804
SELECT jsonb_agg('x');
--! rockstream-error 0A000
SELECT jsonb_agg(DISTINCT id) FROM docs;
--! rockstream-error 0A000
SELECT jsonb_agg(id) OVER () FROM docs;

SELECT id, data, data ->> 'name' AS name FROM docs ORDER BY data ->> 'name', id;
SELECT data -> 'tags' AS tags, count(*) FROM docs GROUP BY data -> 'tags' ORDER BY 1;
SELECT id FROM docs WHERE data ?| ARRAY['addr', 'active'] ORDER BY id;
SELECT id FROM docs WHERE data ?& ARRAY['name', 'tags'] ORDER BY id;
SELECT id, data #- '{addr,city}' AS no_city FROM docs WHERE data ? 'addr' ORDER BY id;

--! error 42725
SELECT '{"a": 1}' -> 'a';
--! error 42883
SELECT '{"a": 1}'::jsonb ? 1;
--! error 42883
SELECT '[1]'::jsonb -> 1::bigint;
--! error 42883
SELECT max(data) FROM docs;
SELECT '[1, "{1}"]'::jsonb - '{1}' AS d, '{"a": 1}'::jsonb || '{"b": 2}' AS c, '{"a": 1}'::jsonb -> NULL AS n,
       '{"a": 1}'::jsonb @> NULL AS cn, ARRAY['{"a": 1}'::jsonb, '[]', NULL] AS arr, '{"{\"x\": 1}",null}'::jsonb[] AS arr_in,
       coalesce(NULL::jsonb, '{}') AS co, CASE WHEN true THEN '1'::jsonb ELSE '"x"' END AS cs,
       '"x"'::jsonb IN ('1', '"x"') AS inl, ('{"a": [1, 2]}'::jsonb -> 'a' -> 1)::int + 1 AS arith;

CREATE MATERIALIZED VIEW top_docs AS
  SELECT id, data FROM docs ORDER BY data DESC, id LIMIT 4;

CREATE MATERIALIZED VIEW set_ops AS
  SELECT data FROM docs WHERE id < 6 UNION SELECT k FROM kinds;

CREATE MATERIALIZED VIEW counted AS
  SELECT tag, count(DISTINCT data) AS n, array_agg(data ORDER BY data, id) AS all_data FROM docs GROUP BY tag;

INSERT INTO docs VALUES (20, '{"name": "eve", "tags": ["b", "a"], "n": 1.0}', 'q'), (21, '{"n": 1, "tags": ["a", "b"], "name": "eve"}', 'q');
UPDATE docs SET data = data || '{"extra": {"deep": [1, [2, {"x": null}]]}}' WHERE id = 20;
DELETE FROM docs WHERE id = 21;
UPDATE kinds SET k = k || '{"v": 2}' WHERE jsonb_typeof(k) = 'object';
DELETE FROM docs WHERE id > 19;
--! error 42725
SELECT '{"a": 1}' #> '{a}';
--! error 42725
SELECT '{"a": 1}' -> 'a'::text;

SELECT '[]'::jsonb #- '{a}' AS d1, '{}'::jsonb #- ARRAY[NULL] AS d2, jsonb_set('{"a": 1}', ARRAY['b', NULL], '2') AS s1,
       jsonb_set('[]', '{x}', '1', false) AS s2, jsonb_set('{}', '{a}', '1', false) AS s3,
       jsonb_insert('{"a": [1]}', '{b,0}', '2') AS i1;
--! error 22P02
SELECT jsonb_set('{"a": [1]}', '{a,x}', '2', false);
--! error 22023
SELECT '1'::jsonb - '{}'::text[];
--! error 22004
SELECT '{"a": 1}'::jsonb #- ARRAY['a', NULL];
--! error 22004
SELECT '[5]'::jsonb #- ARRAY['0', NULL];
--! error 22004
SELECT jsonb_set('{"a": {"b": 1}}', ARRAY['a', NULL], '2');

--! rockstream-only
EXPLAIN INCREMENTAL SELECT d.id, e.key, e.value FROM docs d, jsonb_each(d.data) WITH ORDINALITY AS e WHERE d.data @> '{"a": 1}';
