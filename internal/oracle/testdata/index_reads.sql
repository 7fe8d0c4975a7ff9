-- Reads through indexes (CREATE INDEX): SELECTs, joins, UPDATEs and
-- DELETEs whose conditions bound the leading columns of an index read only
-- those entries, and must find exactly the rows PostgreSQL finds, while
-- every write keeps the indexes in step: comparisons across integer widths
-- and with numerics, NULLs, duplicates in the index key, equal numerics
-- written at different scales, and index lookup joins. (Indexes on
-- materialized views, which the oracle compares with PostgreSQL views,
-- are tested in the runtime.)

CREATE TABLE acc (id bigint PRIMARY KEY, branch int, balance numeric(12,2), note text);
CREATE TABLE ev (day int, seq smallint, amount numeric, tag text);
CREATE MATERIALIZED VIEW by_tag AS SELECT tag, count(*) AS n, sum(amount) AS total FROM ev GROUP BY tag;

INSERT INTO acc VALUES (1, 1, 10.00, 'a'), (2, 1, 20.50, NULL), (3, 2, -5.25, 'c'), (12, 2, 0, 'd'),
  (13, 3, 1.5, 'e'), (3000000000, 3, 1.50, 'big'), (-3000000000, NULL, NULL, 'neg');
INSERT INTO ev VALUES (1, 1, 1, 'x'), (1, 2, 1.0, 'x'), (1, 3, 1.00, 'y'), (2, 1, 2.5, NULL), (2, 1, 2.5, NULL),
  (NULL, 1, 3, 'x'), (3, NULL, NULL, 'z'), (3, -32768, 4, 'z'), (3, 32767, 5, 'x');

CREATE INDEX acc_branch ON acc (branch, balance);
CREATE INDEX ON ev (amount);
CREATE INDEX ON ev (tag, seq);

SELECT * FROM acc WHERE branch = 2;
SELECT * FROM acc WHERE branch = 2.0;
SELECT * FROM acc WHERE branch = 2.5;
SELECT * FROM acc WHERE branch IN (1, 3) AND balance > 1.5;
SELECT * FROM acc WHERE branch = 3 AND balance = 1.5;
SELECT * FROM acc WHERE branch = NULL;
SELECT * FROM acc WHERE branch IS NULL;
SELECT * FROM acc WHERE branch BETWEEN 2 AND 3 AND note > 'c';
SELECT * FROM ev WHERE amount = 1;
SELECT * FROM ev WHERE amount = 2.50;
SELECT * FROM ev WHERE amount > 1 AND amount < 5;
SELECT * FROM ev WHERE tag = 'x' AND seq >= 1;
SELECT * FROM ev WHERE tag IN ('x', 'z') AND seq = 32767;
SELECT * FROM by_tag WHERE n = 3;
SELECT * FROM by_tag WHERE n >= 2;

-- Index lookup joins.
SELECT e.day, a.id FROM ev e JOIN acc a ON a.branch = e.day WHERE e.tag = 'z';
SELECT e.day, a.id FROM ev e LEFT JOIN acc a ON a.branch = e.day WHERE e.seq = 1;
SELECT * FROM acc WHERE branch IN (SELECT day FROM ev WHERE tag = 'x');
SELECT a.id, e.seq FROM acc a JOIN ev e ON e.amount = a.balance WHERE a.note = 'e';

-- Writes through and into indexes.
UPDATE acc SET balance = balance + 1 WHERE branch = 1;
DELETE FROM acc WHERE branch = 2 AND balance < 0;
UPDATE ev SET tag = 'w' WHERE tag = 'x' AND seq = 2;
DELETE FROM ev WHERE amount = 1.00;
INSERT INTO ev VALUES (4, 1, 1.0, 'x'), (4, 1, 1.0, 'x');
SELECT * FROM acc WHERE branch = 1;
SELECT * FROM ev WHERE amount = 1;
SELECT * FROM ev WHERE tag = 'w';
SELECT * FROM by_tag WHERE n = 2;
TRUNCATE ev;
INSERT INTO ev VALUES (5, 5, 5, 'v');
SELECT * FROM ev WHERE amount = 5;
SELECT * FROM by_tag WHERE n = 1;
DROP INDEX acc_branch;
SELECT * FROM acc WHERE branch = 1;
