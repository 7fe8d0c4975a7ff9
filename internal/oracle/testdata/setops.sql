-- INTERSECT [ALL] and EXCEPT [ALL], alone and nested with UNION [ALL].
-- Every view is compared with PostgreSQL after every statement; these
-- results are fully determined (no ordering is involved).

CREATE TABLE a (k int, v text);
CREATE TABLE b (k int, v text);
CREATE TABLE c (k bigint);

-- Empty inputs.
CREATE MATERIALIZED VIEW i_all AS SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b;
CREATE MATERIALIZED VIEW i_set AS SELECT k, v FROM a INTERSECT SELECT k, v FROM b;
CREATE MATERIALIZED VIEW e_all AS SELECT k, v FROM a EXCEPT ALL SELECT k, v FROM b;
CREATE MATERIALIZED VIEW e_set AS SELECT k, v FROM a EXCEPT SELECT k, v FROM b;
-- Column types resolve to the common type (integer and bigint: bigint).
CREATE MATERIALIZED VIEW mixed AS SELECT k FROM a INTERSECT ALL SELECT k FROM c;
-- INTERSECT binds tighter than UNION and EXCEPT; parentheses regroup.
CREATE MATERIALIZED VIEW nest1 AS SELECT k FROM a UNION ALL SELECT k FROM b INTERSECT SELECT k FROM c;
CREATE MATERIALIZED VIEW nest2 AS (SELECT k FROM a UNION ALL SELECT k FROM b) INTERSECT ALL SELECT k FROM c;
CREATE MATERIALIZED VIEW nest3 AS SELECT k FROM a EXCEPT ALL SELECT k FROM b EXCEPT ALL SELECT k FROM c;
CREATE MATERIALIZED VIEW nest4 AS SELECT k FROM a EXCEPT (SELECT k FROM b EXCEPT SELECT k FROM c);
CREATE MATERIALIZED VIEW nest5 AS SELECT k FROM a INTERSECT ALL SELECT k FROM b UNION SELECT k FROM c;
-- A set operation under an aggregate, and filtered from outside.
CREATE MATERIALIZED VIEW counted AS SELECT k, count(*) AS n FROM (SELECT k FROM a EXCEPT ALL SELECT k FROM b) s GROUP BY k;
CREATE MATERIALIZED VIEW filtered AS SELECT * FROM (SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b) s WHERE k > 1;

-- Duplicates on both sides.
INSERT INTO a VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, 'y'), (3, 'z');
INSERT INTO b VALUES (1, 'x'), (2, 'y'), (2, 'y'), (4, 'w');
INSERT INTO c VALUES (1), (2), (2), (5);

-- NULLs are equal to each other in set operations.
INSERT INTO a VALUES (NULL, NULL), (NULL, 'n'), (NULL, NULL);
INSERT INTO b VALUES (NULL, NULL);
INSERT INTO c VALUES (NULL);

-- Deletes on either side.
DELETE FROM b WHERE k = 1;
DELETE FROM a WHERE k = 2;
DELETE FROM c WHERE k = 2;

-- Updates that move rows between keys.
UPDATE a SET k = 4, v = 'w' WHERE k = 3;
UPDATE b SET k = 3 WHERE k = 4;
UPDATE a SET v = 'x2' WHERE k = 1;
UPDATE c SET k = k + 1;

-- A delta that cancels within one transaction.
BEGIN;
INSERT INTO a VALUES (7, 'q'), (7, 'q');
INSERT INTO b VALUES (7, 'q');
DELETE FROM a WHERE k = 7;
DELETE FROM b WHERE k = 7;
COMMIT;

-- Both sides change in one transaction.
BEGIN;
INSERT INTO a VALUES (8, 'r'), (8, 'r'), (8, 'r');
INSERT INTO b VALUES (8, 'r'), (8, 'r');
DELETE FROM a WHERE k IS NULL AND v IS NULL;
COMMIT;

-- Everything goes, then comes back.
DELETE FROM a;
DELETE FROM b;
INSERT INTO b VALUES (1, 'x'), (1, 'x');
INSERT INTO a VALUES (1, 'x');
INSERT INTO a SELECT k, v FROM b;
DELETE FROM c;
