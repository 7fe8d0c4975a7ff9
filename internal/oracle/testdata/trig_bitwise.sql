-- Trigonometric and hyperbolic functions, the degree variants at their
-- exact special angles, the bitwise integer operators and pg_typeof, in
-- queries and in materialized views maintained under inserts, updates and
-- deletes.

CREATE TABLE angles (id int PRIMARY KEY, deg double precision, x double precision, a smallint, b int, c bigint);

INSERT INTO angles VALUES
  (1, 0, 0, 12, 10, 1),
  (2, 30, 0.5, -1, -2147483648, 9223372036854775807),
  (3, 45, 1, 255, 65535, -1),
  (4, 90, -1, 32767, 7, 4294967296),
  (5, NULL, NULL, NULL, NULL, NULL);

CREATE MATERIALIZED VIEW trig AS
  SELECT id, sind(deg) AS s, cosd(deg) AS c, tand(deg) AS t, cotd(deg) AS ct,
         asind(x) AS as_, acosd(x) AS ac, atand(x) AS at, atan2d(x, 1) AS a2,
         sin(radians(deg)) AS rs, cos(x) AS rc, tan(x) AS rt, cot(x + 2) AS rct,
         asin(x) AS ras, acos(x) AS rac, atan(x) AS rat, atan2(x, -1) AS ra2,
         sinh(x) AS sh, cosh(x) AS ch, tanh(x) AS th, asinh(x) AS ash, acosh(x + 2) AS ach, atanh(x / 2) AS ath,
         degrees(atan(x)) AS dg, pi() * x AS px
  FROM angles;

CREATE MATERIALIZED VIEW bits AS
  SELECT id, a & 7 AS a_and, a | 256 AS a_or, a # b AS ab_xor, ~a AS a_not, a << 3 AS a_shl, a >> 2 AS a_shr,
         b & c AS bc_and, b | 1 AS b_or, ~b AS b_not, b << 31 AS b_shl, b >> 33 AS b_shr,
         c & 255 AS c_and, c # -1 AS c_xor, ~c AS c_not, c << 62 AS c_shl, c >> 63 AS c_shr,
         pg_typeof(a & 1)::text AS t1, pg_typeof(a << 1)::text AS t2, pg_typeof(b | c)::text AS t3
  FROM angles;

CREATE MATERIALIZED VIEW typed AS
  SELECT id, pg_typeof(deg)::text AS t_deg, pg_typeof(a)::text AS t_a, pg_typeof(x::numeric)::text AS t_num,
         pg_typeof(ARRAY[b])::text AS t_arr, pg_typeof(deg)::text || ' ' || coalesce(a, 0) AS t_text
  FROM angles;

SELECT * FROM trig ORDER BY id;
SELECT * FROM bits ORDER BY id;

INSERT INTO angles VALUES (6, 180, -0.5, -32768, 1, -9223372036854775808), (7, -270, 0.25, 5, -5, 5);
UPDATE angles SET deg = deg + 30, x = -x, a = a # 1, b = ~b WHERE id IN (1, 2, 3);
DELETE FROM angles WHERE id = 4;

-- Special angles of every degree function.
SELECT d, sind(d), cosd(d), tand(d), cotd(d) FROM (VALUES (0::float8), (30), (45), (60), (90), (120), (135), (150), (180),
  (210), (225), (240), (270), (300), (315), (330), (360), (-30), (-45), (-90), (-180), (720), (1e20)) v(d) ORDER BY d;
SELECT v, asind(v), acosd(v), atand(v) FROM (VALUES (-1::float8), (-0.5), (0), (0.5), (1), ('NaN')) t(v) ORDER BY v;
SELECT atan2d(1, 1), atan2d(1, 0), atan2d(0, -1), atan2d(-1, -1), atan2(0, -1) = pi(), cot(0), tand(90), cotd(0);
SELECT sin(1), cos(1), tan(1), sinh(710), sinh(-710), cosh(710), tanh(-1e300), asinh(-0), acosh(1), atanh(1), atanh(-1);
SELECT sin(NULL), atan2(1, NULL), sind(NULL::numeric), pg_typeof(sin(1::numeric));

--! error 22003
SELECT sin('Infinity'::float8);
--! error 22003
SELECT cosd('-Infinity'::float8);
--! error 22003
SELECT asin(1.5);
--! error 22003
SELECT acosd(-1.0000001);
--! error 22003
SELECT acosh(0.5);
--! error 22003
SELECT atanh(2);
--! error 22003
SELECT x FROM angles WHERE id = 7 AND asin(x + 1) > 0;
--! error 42883
SELECT sin(1, 2);

-- Bitwise operators: result types, shift counts taken modulo the width,
-- mixed types by implicit casts.
SELECT 12::smallint & 10::smallint, 12 | 3, 5::bigint # 3, ~0::smallint, ~5, ~(-1)::bigint;
SELECT 1 << 31, 1 << 32, 1 << -1, 1::smallint << 15, 1::smallint << 16, 1::bigint << 63, 1::bigint << 64, -8 >> 1, -1 >> 40;
SELECT 12::smallint & 10, 12::smallint | 3::bigint, 2 # 3::smallint, '12' & 10, 1 << 2::smallint;
SELECT pg_typeof(1::smallint & 1::smallint), pg_typeof(1::smallint << 1), pg_typeof(1 # 1::bigint), pg_typeof(~1::smallint);
SELECT NULL::int & 1, ~NULL::int, 1 << NULL;
--! error 42883
SELECT 1.5 & 1;
--! error 42883
SELECT 1 << 1::bigint;
--! error 42883
SELECT ~1.5;

-- pg_typeof prints PostgreSQL's type names. A view keeps its text: a
-- regtype column names an object by OID and is refused in views.
--! rockstream-error 0A000
CREATE MATERIALIZED VIEW typed_oid AS SELECT pg_typeof(a) FROM angles;
SELECT pg_typeof(1), pg_typeof(1.5), pg_typeof(1e300::float8), pg_typeof('x'), pg_typeof(NULL), pg_typeof('x'::text),
       pg_typeof('x'::varchar(3)), pg_typeof(timestamp '2026-01-01'), pg_typeof(timestamptz '2026-01-01'), pg_typeof(date '2026-01-01'),
       pg_typeof(interval '1 day'), pg_typeof(true), pg_typeof('\x01'::bytea), pg_typeof(ARRAY['a']), pg_typeof(ARRAY[1.5]),
       pg_typeof(1::real), pg_typeof(1::int2), pg_typeof(1::int8), pg_typeof(12.5::numeric(5,2));
SELECT pg_typeof(pg_typeof(1)), pg_typeof(1)::text || '!', pg_typeof(x) FROM angles WHERE id = 1;
