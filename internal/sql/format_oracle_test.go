package sql

import "testing"

// TestOracleFormat binds and evaluates format(), quote_literal and
// quote_nullable calls and compares value, type or error with
// PostgreSQL.
func TestOracleFormat(t *testing.T) {
	exprs := []string{
		"format('Hello %s', 'World')", "format('Hello %s')", "format('%s, %s', 'a')", "format(NULL)",
		"format(NULL, 1)", "format('')", "format('plain')", "format('%%')", "format('100%% %s', 1)",
		"format('%')", "format('abc %')", "format('%z', 1)", "format('%z')", "format('%*z')", "format('%*z', 1)", "format('%2$z', 1)", "format('%1$z', 1)", "format('%é', 1)",
		"format('%s %s %s', 1, 2.50, true)", "format('%s', NULL)", "format('[%s]', NULL::int)",
		"format('%I', 'foo')", "format('%I', 'Foo')", "format('%I', 'select')", "format('%I', 'a b')",
		"format('%I', 'a\"b')", "format('%I', NULL)", "format('%I', '')", "format('%I', 'user')", "format('%I', 'name')",
		"format('%I', 42)", "format('%L', 'O''Reilly')", "format('%L', NULL)", "format('%L', 'a\\b')", "format('%L', 42)",
		"format('%L', 1.5)", "format('%L', date '2020-01-02')", "format('%L', ARRAY[1, 2])", "format('%s', ARRAY['a', NULL])",
		"format('%1$s %1$s', 'x')", "format('%2$s %1$s', 'a', 'b')", "format('%3$s, %2$s, %s', 'one', 'two', 'three')",
		"format('%0$s', 'x')", "format('%3$s', 'a', 'b')", "format('%1$s %s', 'a', 'b')",
		"format('|%10s|', 'foo')", "format('|%-10s|', 'foo')", "format('|%2s|', 'foobar')", "format('|%*s|', 10, 'foo')",
		"format('|%*s|', -10, 'foo')", "format('|%-*s|', 10, 'foo')", "format('|%-*s|', -10, 'foo')", "format('|%*s|', NULL, 'x')",
		"format('|%*s|', '5', 'x')", "format('|%*s|', 'a', 'x')", "format('|%*s|', 5::bigint, 'x')", "format('|%*s|', 5.0, 'x')",
		"format('|%*s|', 5::smallint, 'x')", "format('|%*s|', 99999999999, 'x')",
		"format('|%1$*2$s|', 'foo', 10)", "format('|%*2$s|', 'foo', 6)", "format('|%1$-*2$s|', 'foo', 6)",
		"format('|%*0$s|', 'foo', 6)", "format('|%*2s|', 'foo', 6)", "format('|%*s|', 4)", "format('|%10L|', 'x')",
		"format('|%-6I|', 'Ab')", "format('|%5s|', 'héllo')", "format('|%6s|', 'é')", "format('%--5s|', 'a')",
		"format('%1$', 'a')", "format('%1', 'a')", "format('%-', 'a')", "format('%*', 1)", "format('%99999999999s', 'a')",
		"format('%3$s', 'a')", "format('%s', 1::int2, 2)", "format(1, 2)", "format()", "format('%s', timestamptz '2020-01-02 03:04:05+00')",
		"format('%s', interval '1 day 02:00')", "format('%s', 1.0e10::float8)", "format('%s', '\\x01'::bytea)",
		"format('%s-%s', VARIADIC ARRAY['a', 'b'])", "format('%2$s %1$s', VARIADIC ARRAY[1, 2])", "format('%s', VARIADIC NULL::int[])",
		"format('%s %s', VARIADIC ARRAY['a'])", "format('%L|%I', VARIADIC ARRAY[NULL, 'X'])", "format('|%*s|', VARIADIC ARRAY[5, 7])",
		"format('%s', VARIADIC ARRAY[]::text[])", "format('x', VARIADIC ARRAY[1])", "format('%s', VARIADIC 1)",
		"format('%s', VARIADIC '{a,b}')", "format(NULL, VARIADIC ARRAY[1])", "format('%s', VARIADIC ARRAY[1.5, 2])",
		"quote_literal('abc')", "quote_literal('it''s')", "quote_literal('a\\b')", "quote_literal(NULL)", "quote_literal(''::text)",
		"quote_nullable('abc')", "quote_literal(42)", "quote_nullable(1.5)", "quote_literal(ARRAY['a''b'])", "quote_literal(date '2020-01-01')", "quote_nullable(NULL::int)", "quote_nullable(NULL)", "quote_nullable(NULL::text)", "quote_nullable('a''\\b')",
	}
	compareWithPostgres(t, exprs)
}
