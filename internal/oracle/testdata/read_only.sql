-- A write in a read-only transaction is analysed first, as PostgreSQL's
-- executor checks the mode only after parse analysis: a missing relation
-- or column is reported before 25006. Utility statements (DDL, TRUNCATE)
-- are refused at once.
CREATE TABLE ro_t (id int PRIMARY KEY, v int);
INSERT INTO ro_t VALUES (1, 10);

BEGIN READ ONLY;
--! error 42P01
INSERT INTO ro_missing VALUES (1);
ROLLBACK;

BEGIN READ ONLY;
--! error 25006
INSERT INTO ro_t VALUES (2, 20);
ROLLBACK;

BEGIN READ ONLY;
--! error 42703
INSERT INTO ro_t (nosuch) VALUES (1);
ROLLBACK;

BEGIN READ ONLY;
--! error 42P01
UPDATE ro_missing SET v = 1;
ROLLBACK;

BEGIN READ ONLY;
--! error 42703
UPDATE ro_t SET nosuch = 1;
ROLLBACK;

BEGIN READ ONLY;
--! error 42703
UPDATE ro_t SET v = 1 WHERE nosuch = 2;
ROLLBACK;

BEGIN READ ONLY;
--! error 25006
UPDATE ro_t SET v = 11 WHERE id = 1;
ROLLBACK;

BEGIN READ ONLY;
--! error 42P01
DELETE FROM ro_missing;
ROLLBACK;

BEGIN READ ONLY;
--! error 25006
DELETE FROM ro_t;
ROLLBACK;

BEGIN READ ONLY;
--! error 25006
TRUNCATE ro_missing;
ROLLBACK;

BEGIN READ ONLY;
--! error 25006
CREATE TABLE ro_new (a int);
ROLLBACK;

-- The same for statements outside a block when the session's default is
-- read-only.
SET default_transaction_read_only = on;
--! error 42P01
INSERT INTO public.ro_missing VALUES (1);
--! error 25006
INSERT INTO ro_t VALUES (3, 30);
SET default_transaction_read_only = off;

SELECT * FROM ro_t ORDER BY id;
