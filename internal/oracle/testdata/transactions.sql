-- Transactions: BEGIN ... COMMIT applies all its changes to every view
-- at once, and other sessions (the observers that read the views after
-- each statement) see none of them before COMMIT; ROLLBACK applies none.
-- An error aborts the block: later statements fail with 25P02 and COMMIT
-- rolls back. A change that makes a materialized view's query fail is
-- reported at the latest at COMMIT, which then fails with that error.

CREATE TABLE acct (id int, owner text, balance numeric(10,2), units int);
CREATE MATERIALIZED VIEW balances AS SELECT owner, sum(balance) AS total, count(*) AS n FROM acct GROUP BY owner;
CREATE MATERIALIZED VIEW all_accts AS SELECT id, owner, balance FROM acct;
CREATE MATERIALIZED VIEW rich AS SELECT DISTINCT owner FROM acct WHERE balance >= 100;

INSERT INTO acct VALUES (1, 'ann', 100.00, 1), (2, 'bob', 50.00, 2), (3, 'ann', 25.00, 5);

-- Committed: the views change at COMMIT, all together.
BEGIN;
INSERT INTO acct VALUES (4, 'cyd', 500.00, 1);
UPDATE acct SET balance = balance - 30 WHERE id = 1;
UPDATE acct SET balance = balance + 30 WHERE id = 2;
-- The transaction reads its own writes.
SELECT id, owner, balance FROM acct ORDER BY id;
COMMIT;

-- Rolled back: nothing changes.
BEGIN;
DELETE FROM acct WHERE owner = 'ann';
UPDATE acct SET owner = 'zed';
INSERT INTO acct VALUES (5, 'eve', 1.00, 1);
ROLLBACK;

-- The same row changed several times, and a row inserted and deleted.
BEGIN;
UPDATE acct SET balance = balance * 2 WHERE id = 2;
UPDATE acct SET balance = balance * 2 WHERE id = 2;
UPDATE acct SET owner = 'ann' WHERE id = 2;
INSERT INTO acct VALUES (6, 'tmp', 1000.00, 1);
DELETE FROM acct WHERE id = 6;
DELETE FROM acct WHERE id = 3;
INSERT INTO acct VALUES (3, 'ann', 25.00, 5);
COMMIT;

-- An error aborts the block.
BEGIN;
INSERT INTO acct VALUES (7, 'dan', 10.00, 1);
--! error 22012
SELECT 1 / 0;
--! error 25P02
INSERT INTO acct VALUES (8, 'dan', 20.00, 1);
--! error 25P02
SELECT 1;
COMMIT;

BEGIN;
UPDATE acct SET balance = 0;
--! error 42P01
INSERT INTO no_such_table VALUES (1);
ROLLBACK;

-- A materialized view whose query fails on the block's changes: the
-- failure surfaces by COMMIT, and the block changes nothing.
CREATE MATERIALIZED VIEW per_unit AS SELECT id, balance / units AS unit_price FROM acct;
BEGIN;
INSERT INTO acct VALUES (9, 'fay', 90.00, 3);
INSERT INTO acct VALUES (10, 'fay', 90.00, 0);
UPDATE acct SET units = units + 1 WHERE id = 1;
--! error 22012
COMMIT;

-- Synonyms, and the warnings-only cases.
START TRANSACTION;
INSERT INTO acct VALUES (11, 'gus', 11.00, 1);
END;
BEGIN;
INSERT INTO acct VALUES (12, 'hal', 12.00, 1);
ABORT;
BEGIN;
BEGIN;
INSERT INTO acct VALUES (13, 'ivy', 13.00, 1);
COMMIT;
COMMIT;
ROLLBACK;

-- A larger transaction touching every row.
BEGIN;
UPDATE acct SET balance = balance + 1;
INSERT INTO acct SELECT id + 100, owner, balance, units FROM acct;
DELETE FROM acct WHERE id > 100 AND owner = 'ann';
UPDATE acct SET owner = 'x' WHERE id > 100;
COMMIT;

SELECT * FROM balances ORDER BY owner;

-- Savepoints: an error repaired by going back, nested savepoints, RELEASE.
BEGIN;
INSERT INTO acct VALUES (300, 'sam', 30.00, 3);
SAVEPOINT s1;
--! error 22012
UPDATE acct SET units = units / 0 WHERE id = 300;
ROLLBACK TO SAVEPOINT s1;
UPDATE acct SET balance = balance + 1 WHERE id = 300;
SAVEPOINT s2;
DELETE FROM acct WHERE owner = 'sam';
ROLLBACK TO s2;
RELEASE s1;
COMMIT;

SELECT * FROM balances ORDER BY owner;
