-- Binary string functions in queries and in materialized views maintained
-- under inserts, updates and deletes: encode/decode, convert_from/
-- convert_to, get/set_bit, get/set_byte, bit_count, the SHA-2 family and
-- md5.

CREATE TABLE blobs (id int PRIMARY KEY, b bytea, t text, fmt text, k int);

INSERT INTO blobs VALUES
  (1, '\x00ff5c41', 'héllo', 'hex', 0),
  (2, 'abc', 'plain', 'base64', 9),
  (3, '\x', '', 'escape', 0),
  (4, NULL, NULL, NULL, NULL),
  (5, convert_to(repeat('x', 57), 'UTF8'), 'ÿ', 'HEX', 3);

CREATE MATERIALIZED VIEW codecs AS
  SELECT id, encode(b, 'hex') AS hex, encode(b, 'base64') AS b64, encode(b, 'escape') AS esc, encode(b, fmt) AS by_fmt,
         decode(encode(b, 'base64'), 'base64') = b AS round_trip, decode(encode(b, 'escape'), 'escape') AS esc_back,
         convert_to(t, 'UTF8') AS utf8, convert_to(t, 'LATIN1') AS latin1, convert_from(convert_to(t, 'latin1'), 'LATIN1') AS back,
         length(b) AS len, octet_length(b) AS olen, bit_count(b) AS bits, md5(b) AS md5, sha256(b) AS sha, sha224(b) AS s224,
         encode(sha512(b), 'hex') AS s512, sha384(convert_to(t, 'UTF8')) AS s384
  FROM blobs;

CREATE MATERIALIZED VIEW bit_ops AS
  SELECT id, get_bit(b || '\x01', k) AS bit_k, set_bit(b || '\x00', k, 1) AS with_bit, get_byte(b || '\x7f', 0) AS byte0,
         set_byte(b || '\x00', 0, 255) AS first_ff
  FROM blobs;

SELECT * FROM codecs ORDER BY id;
SELECT * FROM bit_ops ORDER BY id;

INSERT INTO blobs VALUES (6, '\xdeadbeef', 'Zoë', 'base64', 31);
UPDATE blobs SET b = b || '\x0a', k = k + 1 WHERE id IN (1, 2);
DELETE FROM blobs WHERE id = 3;

-- Formats and their edge cases.
SELECT encode('\x0001027f80ff'::bytea, 'hex'), encode('\x0001027f80ff', 'base64'), encode('\x0001025c80ff', 'escape');
SELECT encode(convert_to(repeat('ab', 40), 'UTF8'), 'base64');
SELECT decode('0a 0B', 'hex'), decode('QUJD RA==', 'base64'), decode('a\\b\101\000', 'escape'), decode('', 'hex');
SELECT decode('QQ==QQ==', 'base64'), decode('QQ=x', 'base64'), decode(NULL, 'hex'), encode('\x01', NULL);
SELECT convert_from('\x68c3a9', 'utf-8'), convert_from('\xe9', 'latin1'), convert('\xe9', 'LATIN1', 'UTF8'),
       convert_from('abc', 'SQL_ASCII'), convert_to('abc', 'sql_ascii');
SELECT get_bit('\x80'::bytea, 7), get_bit(bytea '\x80', 0), set_bit('\x0000'::bytea, 9, 1), get_byte('\x0102', 1), set_byte('\x0102', 1, 511);
SELECT bit_count('\xff0f'::bytea), bit_count(''::bytea), sha256(''), md5(''::bytea);
--! error 22023
SELECT encode('\x01', 'base32');
--! error 22023
SELECT decode('0g', 'hex');
--! error 22023
SELECT decode('abc', 'hex');
--! error 22023
SELECT decode('QQ', 'base64');
--! error 22023
SELECT decode('Q===', 'base64');
--! error 22023
SELECT decode('QU*D', 'base64');
--! error 22P02
SELECT decode('\400', 'escape');
--! error 22021
SELECT convert_from('\xc328', 'UTF8');
--! error 22021
SELECT convert_from('\x4100', 'SQL_ASCII');
--! error 22P05
SELECT convert_to('€', 'LATIN1');
--! error 22023
SELECT convert_from('\x41', 'no_such_encoding');
--! error 22023
SELECT convert('\x41', 'UTF8', 'no_such_encoding');
--! rockstream-error 0A000
SELECT convert_to('a', 'WIN1252');
--! error 2202E
SELECT get_bit('\x01'::bytea, 8);
--! error 2202E
SELECT get_bit(''::bytea, 0);
--! error 2202E
SELECT set_bit('\x01'::bytea, -1, 1);
--! error 22023
SELECT set_bit('\x01'::bytea, 1, 2);
--! error 2202E
SELECT get_byte('\x01', 1);
--! error 2202E
SELECT set_byte('\x01', -1, 0);
--! error 2202E
SELECT id FROM blobs WHERE get_bit(b, 40) = 1;
