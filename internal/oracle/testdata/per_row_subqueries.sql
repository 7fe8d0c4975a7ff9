-- Ad-hoc queries whose correlated subqueries cannot become joins (an
-- aggregate correlated by a condition other than inner = outer, a
-- correlated function in FROM), evaluated once per row, and the
-- regular-expression operators, compared with PostgreSQL.

CREATE TABLE items (k int PRIMARY KEY, lim int, tag text, tags text[]);
INSERT INTO items VALUES (1, 2, 'pg_toast', '{a,b}'), (2, 5, 'orders', '{b}'), (3, NULL, 'Orders2', NULL),
  (4, 0, NULL, '{}'), (5, 3, 'a.b', '{c,a}');

SELECT k, (SELECT count(*) FROM items i2 WHERE i2.k < i1.lim) AS below FROM items i1 ORDER BY k;
SELECT k, (SELECT max(i2.k) FROM items i2 WHERE i2.k <> i1.k AND i2.lim > i1.k) AS m FROM items i1 ORDER BY k;
SELECT k, ARRAY(SELECT i2.k FROM items i2 WHERE i2.k < i1.k ORDER BY 1) AS before FROM items i1 ORDER BY k;
SELECT k, array_to_string(ARRAY(SELECT i2.tag FROM items i2 WHERE i2.tag = ANY (i1.tags) ORDER BY 1), ',') FROM items i1 ORDER BY k;
SELECT k, (SELECT sum(s) FROM generate_series(1, i1.lim) s) AS total FROM items i1 ORDER BY k;
SELECT k, (SELECT string_agg(x, '+' ORDER BY x) FROM unnest(i1.tags) x) AS joined FROM items i1 ORDER BY k;
SELECT k, EXISTS (SELECT 1 FROM generate_series(1, i1.lim) s WHERE s > 2) AS big FROM items i1 ORDER BY k;
SELECT s, s * 2 FROM generate_series(-3, 3, 2) s ORDER BY s;
SELECT count(*) FROM generate_series(5, 1);

SELECT k, tag ~ '^pg_', tag ~* '^ord', tag !~ '\.', tag ~ '^[[:alpha:]_]+$', tag OPERATOR(pg_catalog.~) '^(orders)$' FROM items ORDER BY k;
SELECT k FROM items WHERE tag ~ '^(a\.b|orders)$' COLLATE "C" ORDER BY k;
