-- ALTER TABLE with materialized views over the table: ADD COLUMN and the
-- renames keep the views running (they never see a new column, and keep
-- reading renamed columns and tables); DROP COLUMN and TYPE of a column a
-- view reads are refused (2BP01, 0A000), and CASCADE drops the view.
-- Columns a view does not read can be dropped and retyped.

CREATE TABLE items (id int PRIMARY KEY, cat text, price numeric(8, 2), note text);
CREATE TABLE cats (name text, rank int);
INSERT INTO items VALUES (1, 'a', 1.50, 'x'), (2, 'b', 2.25, NULL), (3, 'a', NULL, 'y');
INSERT INTO cats VALUES ('a', 1), ('b', 2), ('b', 3);
CREATE MATERIALIZED VIEW by_cat AS SELECT cat, count(*) AS n, sum(price) AS total FROM items GROUP BY cat;
CREATE MATERIALIZED VIEW everything AS SELECT * FROM items;
CREATE MATERIALIZED VIEW ranked AS SELECT i.id, c.rank FROM items i JOIN cats c ON i.cat = c.name;

ALTER TABLE items ADD COLUMN qty int NOT NULL DEFAULT 1;
INSERT INTO items VALUES (4, 'b', 9.99, 'z', 5);
UPDATE items SET qty = qty + 1 WHERE cat = 'a';
ALTER TABLE items RENAME COLUMN price TO unit_price;
ALTER TABLE cats RENAME TO categories;
INSERT INTO categories VALUES ('c', 4);
INSERT INTO items (id, cat, unit_price) VALUES (5, 'c', 0.50);
DELETE FROM items WHERE id = 2;

--! error 2BP01
ALTER TABLE items DROP COLUMN unit_price;
--! error 0A000
ALTER TABLE items ALTER COLUMN unit_price TYPE numeric(10, 3);
--! error 2BP01
ALTER TABLE items DROP COLUMN note;
--! error 0A000
ALTER TABLE items ALTER COLUMN id TYPE bigint USING id * 10;
ALTER TABLE items ALTER COLUMN qty TYPE text USING 'q' || qty, ADD COLUMN extra int;
UPDATE items SET cat = 'b', extra = 2 WHERE id = 1;
ALTER TABLE items DROP COLUMN qty;

ALTER TABLE items DROP COLUMN note CASCADE;
INSERT INTO items VALUES (60, 'a', 3.00, 6);
--! error 23502
ALTER TABLE items ALTER COLUMN unit_price SET NOT NULL;
ALTER TABLE items ALTER COLUMN cat SET DEFAULT 'a', ALTER COLUMN cat SET NOT NULL;
INSERT INTO items (id, unit_price) VALUES (70, 7.00);
--! error 23502
INSERT INTO items (id, cat) VALUES (80, NULL);
DELETE FROM categories WHERE rank = 3;
SELECT * FROM items;
