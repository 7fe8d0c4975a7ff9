-- SQL regular expressions: SIMILAR TO, NOT SIMILAR TO with and without
-- ESCAPE, substring(x SIMILAR p ESCAPE e) and substring(x FROM p FOR e),
-- in queries and in materialized views maintained under inserts,
-- updates and deletes.

CREATE TABLE names (id int PRIMARY KEY, name text, pat text, esc text);

INSERT INTO names VALUES
  (1, 'foobar', '%o_b%', '#'),
  (2, 'abc', '(a|b)%', ''),
  (3, '', '%', '!'),
  (4, NULL, 'a', '#'),
  (5, '50% off', '%!%%', '!'),
  (6, 'x_y', 'x#_y', '#'),
  (7, 'Zebra', '[A-Z]%', NULL);

CREATE MATERIALIZED VIEW similar_flags AS
  SELECT id, name SIMILAR TO pat AS m, name NOT SIMILAR TO pat AS nm, name SIMILAR TO pat ESCAPE esc AS me,
         name SIMILAR TO '%[aeiou]{2}%' AS two_vowels, name SIMILAR TO '(foo|ab)%' AS prefixed,
         substring(name SIMILAR '%#"[aeiou]+#"%' ESCAPE '#') AS vowels,
         substring(name FROM '#"_#"%' FOR '#') AS first_char
  FROM names;

CREATE MATERIALIZED VIEW similar_filtered AS
  SELECT id, name FROM names WHERE name SIMILAR TO '%(o|e)%' AND name NOT SIMILAR TO 'f%';

CREATE MATERIALIZED VIEW similar_grouped AS
  SELECT name SIMILAR TO '[a-z]%' AS lower_first, count(*) AS n FROM names GROUP BY 1;

SELECT * FROM similar_flags ORDER BY id;
SELECT * FROM similar_filtered ORDER BY id;
SELECT * FROM similar_grouped ORDER BY 1;

INSERT INTO names VALUES (8, 'hello', 'h_llo', '#'), (9, 'queue', '%ue', '#');
UPDATE names SET name = name || 'e' WHERE id IN (1, 2);
UPDATE names SET pat = '%' WHERE id = 7;
DELETE FROM names WHERE id = 3;

SELECT 'abc' SIMILAR TO 'abc', 'abc' SIMILAR TO 'a', 'abc' SIMILAR TO '%(b|d)%', 'abc' SIMILAR TO '(b|c)%';
SELECT 'a.c' SIMILAR TO 'a.c', 'abc' SIMILAR TO 'a.c', 'a+' SIMILAR TO 'a+', 'aa' SIMILAR TO 'a+';
SELECT 'abc' SIMILAR TO 'a%' ESCAPE '', 'a%' SIMILAR TO 'a\%', 'ab' SIMILAR TO 'a\%', 'abc' SIMILAR TO 'a%' ESCAPE NULL;
SELECT substring('foobar' SIMILAR '%#"o_b#"%' ESCAPE '#'), substring('foobar' SIMILAR '#"o_b#"%' ESCAPE '#');
SELECT substring('foobar' FROM '%#"o%#"%' FOR '#'), substring('aaa' SIMILAR 'a#"a*#"a*' ESCAPE '#'), substring('abc' SIMILAR 'a%' ESCAPE '#');
SELECT substring('xyz' SIMILAR 'x#"%' ESCAPE '#'), substring(NULL SIMILAR 'a' ESCAPE '#'), similar_to_escape('a%b_c(d|e)'), similar_to_escape('a#%', '#');

--! error 22025
SELECT 'abc' SIMILAR TO 'a' ESCAPE 'xy';
--! error 2200C
SELECT substring('abc' SIMILAR 'a#"b#"c#"' ESCAPE '#');
--! error 2201B
SELECT 'abc' SIMILAR TO '(a';
