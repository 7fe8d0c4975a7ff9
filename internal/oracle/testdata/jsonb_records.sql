-- jsonb_to_record and jsonb_to_recordset in FROM: the listed columns from
-- each object's members of their names, converted as PostgreSQL's
-- populate_record converts them (a member's text through the column
-- type's input, a jsonb column the member itself, NULL when missing or
-- null). Maintained views over a table of documents under inserts,
-- updates and deletes, and ad hoc.

CREATE TABLE orders (id int PRIMARY KEY, doc jsonb);

CREATE MATERIALIZED VIEW lines AS
  SELECT o.id, l.sku, l.qty, l.price, l.extra
  FROM orders o, jsonb_to_recordset(o.doc -> 'lines') AS l(sku text, qty int, price numeric, extra jsonb)
  WHERE jsonb_typeof(o.doc -> 'lines') = 'array';
CREATE MATERIALIZED VIEW heads AS
  SELECT o.id, h.customer, h.rush, h.placed, h.note
  FROM orders o, jsonb_to_record(o.doc) AS h(customer text, rush boolean, placed date, note varchar(10))
  WHERE jsonb_typeof(o.doc) = 'object';
CREATE MATERIALIZED VIEW totals AS
  SELECT o.id, sum(l.qty * l.price) AS total, count(*) AS n
  FROM orders o, jsonb_to_recordset(o.doc -> 'lines') AS l(qty int, price numeric)
  WHERE jsonb_typeof(o.doc -> 'lines') = 'array'
  GROUP BY o.id;

INSERT INTO orders VALUES
  (1, '{"customer": "ann", "rush": true, "placed": "2026-01-02", "lines": [{"sku": "a", "qty": 2, "price": 1.50}, {"sku": "b", "qty": 1, "price": "3", "extra": {"gift": true}}]}'),
  (2, '{"customer": "bob", "lines": [{"sku": "a", "qty": null, "price": 1.5}, {}]}'),
  (3, '{"customer": null, "rush": false, "note": "short"}'),
  (4, '{"lines": []}'),
  (5, '{"customer": "dup", "lines": [{"sku": "z", "qty": 1, "price": 2}, {"sku": "z", "qty": 1, "price": 2}]}');

UPDATE orders SET doc = jsonb_set(doc, '{lines,0,qty}', '5') WHERE id = 1;
UPDATE orders SET doc = doc || '{"rush": true}' WHERE id = 2;
DELETE FROM orders WHERE id = 5;
INSERT INTO orders VALUES (6, '{"customer": "eve", "lines": [{"sku": "q", "qty": 3, "price": 0.25, "unknown": 1}]}');

SELECT * FROM jsonb_to_record('{"a": 1, "b": "x", "c": {"z": [1, 2]}, "d": true, "e": 1.5, "f": "2026-01-02"}')
  AS x(a int, b text, c text, d bool, e numeric, f date, g int, c2 jsonb);
SELECT * FROM jsonb_to_record('{"a": {"z": 1}, "b": [1, 2], "c": "str"}') AS x(a jsonb, b json, c jsonb);
SELECT * FROM jsonb_to_recordset('[{"a": 1}, {"a": 2, "b": "y"}, {}]') AS x(a int, b text);
SELECT * FROM jsonb_to_record(NULL) AS x(a int);
SELECT * FROM jsonb_to_recordset(NULL) AS x(a int);
SELECT * FROM jsonb_to_record('{"a": null}') AS x(a int);

--! error 22023
SELECT * FROM jsonb_to_record('[1]') AS x(a int);
--! error 22023
SELECT * FROM jsonb_to_recordset('{"a": 1}') AS x(a int);
--! error 22023
SELECT * FROM jsonb_to_recordset('[1]') AS x(a int);
--! error 22P02
SELECT * FROM jsonb_to_record('{"a": 1.5}') AS x(a int);
--! error 22001
SELECT * FROM jsonb_to_record('{"a": "abcdef"}') AS x(a varchar(3));
--! error 42601
SELECT * FROM jsonb_to_record('{"a": 1}');
--! error 42601
SELECT * FROM jsonb_to_recordset('[{"a": 1}]') WITH ORDINALITY AS x(a int);
--! error 22P02
INSERT INTO orders VALUES (7, '{"lines": [{"qty": "many"}]}');
