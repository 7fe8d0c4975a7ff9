-- pg_options_to_table over option arrays ("name=value", a value after the
-- first '=', none without one), in FROM with ordinality and a column alias
-- list, in ARRAY(SELECT ...) over the row's own array, and unnest on the
-- left side of a JOIN, in queries and in materialized views maintained
-- under inserts, updates and deletes.

CREATE TABLE servers (id int PRIMARY KEY, opts text[]);
CREATE TABLE hosts (id int PRIMARY KEY, name text);

INSERT INTO servers VALUES (1, '{host=a,port=5432}'), (2, '{flag,"x=y=z",=empty}'), (3, NULL), (4, '{}');
INSERT INTO hosts VALUES (1, 'one'), (2, 'two'), (3, 'three');

CREATE MATERIALIZED VIEW server_options AS
  SELECT s.id, o.option_name, o.option_value, o.n
  FROM servers s, pg_options_to_table(s.opts) WITH ORDINALITY AS o(option_name, option_value, n);

CREATE MATERIALIZED VIEW option_lists AS
  SELECT id, array_to_string(ARRAY(SELECT option_name || ' ' || coalesce(option_value, '-')
    FROM pg_options_to_table(opts) ORDER BY option_name), ', ') AS list
  FROM servers;

--! unordered
SELECT * FROM server_options;
--! unordered
SELECT * FROM option_lists;

--! unordered
SELECT id, array_to_string(ARRAY(SELECT quote_ident(option_name) || ' ' || quote_literal(option_value)
  FROM pg_options_to_table(opts) ORDER BY option_name), ', ') AS list FROM servers;
--! unordered
SELECT * FROM pg_options_to_table('{a=1,b,c=}'::text[]);
--! unordered
SELECT k, v FROM pg_catalog.pg_options_to_table(ARRAY['k=v', 'w']) AS t(k, v);
--! unordered
SELECT src.x, h.name FROM unnest('{1,3,5}'::int[]) AS src(x) JOIN hosts h ON h.id = src.x;
--! unordered
SELECT src.x, h.name FROM unnest('{1,3,5}'::int[]) AS src(x) LEFT JOIN hosts h ON h.id = src.x;
--! unordered
SELECT o.option_name, h.name FROM pg_options_to_table('{1=a,2=b}'::text[]) o JOIN hosts h ON h.id::text = o.option_name;

INSERT INTO servers VALUES (5, '{user=bob}');
UPDATE servers SET opts = '{port=6543,host=b}' WHERE id = 1;
DELETE FROM servers WHERE id = 2;
UPDATE servers SET opts = '{a=1}' WHERE id = 3;

--! unordered
SELECT * FROM server_options;
--! unordered
SELECT * FROM option_lists;
