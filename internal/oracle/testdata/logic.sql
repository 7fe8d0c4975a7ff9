-- Three-valued logic: AND, OR, NOT, comparisons, IS [NOT] NULL,
-- IS [NOT] DISTINCT FROM, BETWEEN, IN lists, CASE, COALESCE and NULLIF,
-- both as computed columns and as filters (where NULL means "not true",
-- so the row is left out).

CREATE TABLE tv (p boolean, q boolean);
INSERT INTO tv VALUES
  (true, true), (true, false), (true, NULL),
  (false, true), (false, false), (false, NULL),
  (NULL, true), (NULL, false), (NULL, NULL);

CREATE MATERIALIZED VIEW truth AS
SELECT p, q,
       p AND q AS p_and_q,
       p OR q AS p_or_q,
       NOT p AS not_p,
       p = q AS p_eq_q,
       p <> q AS p_ne_q,
       p < q AS p_lt_q,
       p IS NULL AS p_is_null,
       p IS NOT NULL AS p_is_not_null,
       p IS DISTINCT FROM q AS p_distinct_q,
       p IS NOT DISTINCT FROM q AS p_not_distinct_q,
       NOT (p AND q) AS not_p_and_q,
       (NOT p) OR (NOT q) AS de_morgan
FROM tv;

CREATE MATERIALIZED VIEW where_and AS SELECT p, q FROM tv WHERE p AND q;
CREATE MATERIALIZED VIEW where_or AS SELECT p, q FROM tv WHERE p OR q;
CREATE MATERIALIZED VIEW where_not_and AS SELECT p, q FROM tv WHERE NOT (p AND q);
CREATE MATERIALIZED VIEW where_not_or AS SELECT p, q FROM tv WHERE NOT (p OR q);
CREATE MATERIALIZED VIEW where_distinct AS SELECT p, q FROM tv WHERE p IS DISTINCT FROM q;
CREATE MATERIALIZED VIEW where_bool AS SELECT p, q FROM tv WHERE p;
CREATE MATERIALIZED VIEW where_not_bool AS SELECT p, q FROM tv WHERE NOT q;

-- The truth tables again with duplicates, and with rows changing truth.
INSERT INTO tv VALUES (true, NULL), (NULL, NULL);
UPDATE tv SET q = true WHERE q IS NULL AND p;
UPDATE tv SET p = NULL WHERE p = false AND q = false;
DELETE FROM tv WHERE p IS NULL AND q IS NULL;
SELECT p, q, p AND q AS a, p OR q AS o FROM tv ORDER BY p, q;

-- Comparisons with NULLs, BETWEEN, IN, CASE, COALESCE, NULLIF.
CREATE TABLE cmp (id int, a int, b int, t text, u text, x numeric, dt date);
INSERT INTO cmp VALUES
  (1, 1, 2, 'a', 'b', 1.5, '2024-01-01'),
  (2, 2, 2, 'B', 'b', 2, '2024-02-29'),
  (3, 3, NULL, NULL, 'a', NULL, NULL),
  (4, NULL, NULL, '', NULL, -0.5, '1999-12-31'),
  (5, -1, 10, 'ab', 'a', 10.25, '2030-06-15');

CREATE MATERIALIZED VIEW comparisons AS
SELECT id,
       a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge, a = b AS eq, a <> b AS ne, a != b AS ne2,
       t < u AS t_lt, t = u AS t_eq, t >= u AS t_ge,
       a < x AS int_lt_numeric, x = 2 AS x_eq_2, dt < '2024-02-01' AS before_feb,
       a BETWEEN 0 AND b AS a_between,
       a NOT BETWEEN 0 AND 2 AS a_not_between,
       x BETWEEN -1 AND 2 AS x_between,
       dt BETWEEN '2024-01-01' AND '2024-12-31' AS in_2024,
       a IN (1, 3) AS a_in,
       a IN (1, 3, NULL) AS a_in_null,
       a NOT IN (1, 2) AS a_not_in,
       a NOT IN (1, NULL) AS a_not_in_null,
       t IN ('a', 'B') AS t_in,
       x IN (1.5, 2) AS x_in,
       CASE WHEN a < b THEN 'less' WHEN a = b THEN 'equal' ELSE 'other' END AS searched_case,
       CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS simple_case,
       CASE WHEN a IS NULL THEN 0 ELSE a * 10 END AS case_int,
       CASE WHEN a > 1 THEN 1 ELSE 2.5 END AS case_numeric,
       COALESCE(a, b, -1) AS coalesce_int,
       COALESCE(t, u) AS coalesce_text,
       COALESCE(x, a) AS coalesce_numeric,
       COALESCE(dt, '2000-01-01') AS coalesce_date,
       NULLIF(a, 2) AS nullif_int,
       NULLIF(t, '') AS nullif_text,
       NULLIF(x, 2) AS nullif_numeric
FROM cmp;

CREATE MATERIALIZED VIEW f_in AS SELECT id FROM cmp WHERE a IN (1, 2, NULL);
CREATE MATERIALIZED VIEW f_not_in_null AS SELECT id FROM cmp WHERE a NOT IN (1, NULL);
CREATE MATERIALIZED VIEW f_not_in AS SELECT id FROM cmp WHERE a NOT IN (1, 2);
CREATE MATERIALIZED VIEW f_between AS SELECT id FROM cmp WHERE a BETWEEN b - 1 AND 10;
CREATE MATERIALIZED VIEW f_coalesce AS SELECT id FROM cmp WHERE COALESCE(a, 0) = 0;
CREATE MATERIALIZED VIEW f_distinct AS SELECT id FROM cmp WHERE a IS DISTINCT FROM b;
CREATE MATERIALIZED VIEW f_not_distinct AS SELECT id FROM cmp WHERE a IS NOT DISTINCT FROM b;
CREATE MATERIALIZED VIEW f_not_lt AS SELECT id FROM cmp WHERE NOT (a < b);
CREATE MATERIALIZED VIEW f_case AS SELECT id FROM cmp WHERE CASE WHEN t IS NULL THEN false ELSE t < 'b' END;
CREATE MATERIALIZED VIEW f_nullif AS SELECT id FROM cmp WHERE NULLIF(a, b) IS NULL;
CREATE MATERIALIZED VIEW f_text AS SELECT id, t FROM cmp WHERE t > 'A' AND t <= 'b';
CREATE MATERIALIZED VIEW f_mixed AS SELECT id FROM cmp WHERE (a > 0 OR t = '') AND NOT (x < 0);
-- ORs whose arms share a conjunct, which is taken out of them (and
-- becomes a join key): the result must not change, NULLs included.
CREATE MATERIALIZED VIEW f_or_common AS
SELECT id FROM cmp WHERE (a > 0 AND t < 'b') OR (a > 0 AND x > 1) OR (x > 1 AND a > 0 AND u = 'a');
CREATE MATERIALIZED VIEW f_or_absorb AS SELECT id, a FROM cmp WHERE b > 1 OR (b > 1 AND a IS NULL);
CREATE MATERIALIZED VIEW f_or_join AS
SELECT c1.id AS id1, c2.id AS id2 FROM cmp c1, cmp c2
WHERE (c1.a = c2.b AND c1.t = 'b') OR (c1.a = c2.b AND c2.x IS NULL) OR (c1.a = c2.b AND c1.x > c2.x);

-- Rows move in and out of every filter.
INSERT INTO cmp VALUES (6, 2, 1, 'b', 'B', 0, '2024-03-01'), (7, NULL, 0, NULL, NULL, NULL, NULL), (6, 2, 1, 'b', 'B', 0, '2024-03-01');
UPDATE cmp SET a = NULL WHERE id = 1;
UPDATE cmp SET b = 3 WHERE id = 3;
UPDATE cmp SET t = 'A', x = -1 WHERE id = 5;
UPDATE cmp SET a = 0, b = 0 WHERE id = 4;
DELETE FROM cmp WHERE id = 2;
UPDATE cmp SET a = a + 1 WHERE a IS NOT NULL;
DELETE FROM cmp WHERE t IS NULL;
INSERT INTO cmp SELECT id + 10, b, a, u, t, x, dt FROM cmp;

SELECT id, a, b, a IN (b, 2) AS in_col, a BETWEEN b AND 3 AS btw, COALESCE(NULLIF(a, b), 99) AS cn FROM cmp ORDER BY id;
SELECT NULL = NULL AS a, NULL IS NULL AS b, NULL IS DISTINCT FROM NULL AS c, 1 IN (NULL) AS d,
       1 NOT IN (2, NULL) AS e, NULL AND false AS f, NULL OR true AS g, NOT NULL::boolean AS h,
       CASE NULL WHEN NULL THEN 'matched' ELSE 'not matched' END AS i, COALESCE(NULL, NULL) IS NULL AS j;
