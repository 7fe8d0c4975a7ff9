-- unnest(array) in FROM (comma, CROSS JOIN LATERAL, LEFT JOIN LATERAL,
-- WITH ORDINALITY, with a join condition) and in the select list, maintained as a flat map
-- under inserts, updates and deletes; aggregates over unnested elements;
-- op ANY/ALL over array columns with NULL elements and NULL arrays.

CREATE TABLE posts (id int PRIMARY KEY, author text, tags text[], votes int[]);

CREATE MATERIALIZED VIEW post_tags AS
  SELECT p.id, u.tag FROM posts p, unnest(p.tags) AS u(tag);

CREATE MATERIALIZED VIEW tag_positions AS
  SELECT p.id, t.tag, t.pos FROM posts p CROSS JOIN LATERAL unnest(p.tags) WITH ORDINALITY AS t(tag, pos);

CREATE MATERIALIZED VIEW tag_counts AS
  SELECT tag, count(*) AS n, array_agg(id ORDER BY id) AS ids FROM posts, unnest(tags) AS tag GROUP BY tag;

CREATE MATERIALIZED VIEW select_list AS
  SELECT id, unnest(votes) AS vote, author FROM posts;

CREATE MATERIALIZED VIEW vote_totals AS
  SELECT author, sum(v) AS total, count(v) AS votes FROM posts JOIN LATERAL unnest(votes) AS v ON v > 0 GROUP BY author;

CREATE MATERIALIZED VIEW all_posts AS
  SELECT p.id, t.tag, t.pos FROM posts p LEFT JOIN LATERAL unnest(p.tags) WITH ORDINALITY AS t(tag, pos) ON true;

CREATE MATERIALIZED VIEW matching_votes AS
  SELECT p.id, v FROM posts p LEFT JOIN unnest(p.votes) AS v ON v > 2 WHERE p.id < 7;

CREATE MATERIALIZED VIEW tagged AS
  SELECT id, 'go' = ANY(tags) AS go, 'go' <> ALL(tags) AS not_go, 3 = ANY(votes) AS three,
         0 < ALL(votes) AS positive
  FROM posts;

CREATE MATERIALIZED VIEW go_posts AS
  SELECT id, author FROM posts WHERE 'go' = ANY(tags);

CREATE MATERIALIZED VIEW exists_tags AS
  SELECT id, EXISTS (SELECT 1 FROM unnest(tags) AS t WHERE t LIKE 's%') AS has_s,
         NOT EXISTS (SELECT FROM unnest(votes)) AS no_votes
  FROM posts;

CREATE MATERIALIZED VIEW late_go AS
  SELECT id FROM posts p WHERE EXISTS (SELECT 1 FROM unnest(p.tags) WITH ORDINALITY AS u(tag, n) WHERE tag = 'go' AND n > 1);

CREATE MATERIALIZED VIEW distinct_tags AS
  SELECT DISTINCT unnest(tags) AS tag FROM posts;

INSERT INTO posts VALUES
  (1, 'ann', '{go,sql}', '{1,2,3}'),
  (2, 'bob', '{sql,NULL}', '{3,NULL}'),
  (3, 'ann', '{}', '{}'),
  (4, 'cat', NULL, NULL),
  (5, 'bob', '{go,go,rust}', '{-1,5}');

UPDATE posts SET tags = tags || 'ivm'::text WHERE author = 'ann';
UPDATE posts SET votes = NULL WHERE id = 2;
DELETE FROM posts WHERE id = 5;
INSERT INTO posts VALUES (6, 'dan', '{rust,go}', '{4}'), (7, 'dan', '{sql}', '{0,7}');
UPDATE posts SET tags = '{}' WHERE id = 1;

SELECT id, unnest(tags) AS tag FROM posts ORDER BY id, tag;
SELECT * FROM unnest(ARRAY[3, NULL, 1]) WITH ORDINALITY AS u(x, n) ORDER BY n;
SELECT unnest('{a,b}'::text[]) || '!' AS shout;
SELECT x, count(*) FROM posts, unnest(votes) AS x GROUP BY x ORDER BY x;
--! error 0A000
SELECT id FROM posts WHERE unnest(tags) = 'go';

DELETE FROM posts WHERE author = 'dan';
INSERT INTO posts VALUES (8, 'eve', '{x,y,x}', '{1,1}');
