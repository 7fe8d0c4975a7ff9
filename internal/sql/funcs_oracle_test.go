package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/types"
)

// TestOracleFunctionSyntax binds and evaluates function calls written
// with SQL's special syntax (SUBSTRING ... FROM ... FOR, TRIM(BOTH ...),
// POSITION ... IN, EXTRACT ... FROM, OVERLAY, LIKE ... ESCAPE, named
// arguments, concat) and compares value, type or error with PostgreSQL.
func TestOracleFunctionSyntax(t *testing.T) {
	exprs := []string{
		"substring('hello world' from 2 for 3)", "substring('hello world' from 7)", "substring('hello' for 2)",
		"substring('hello' from -1 for 3)", "substring('hello' from 2 for -1)", "substring(12345 from 2)",
		"substring('hello'::varchar(3) from 2)", "substring('\\x0102030405'::bytea from 2 for 2)",
		"trim('  x  ')", "trim(both 'x' from 'xxaxx')", "trim(leading 'x' from 'xxaxx')", "trim(trailing 'x' from 'xxaxx')",
		"trim(both from '  a  ')", "trim(leading from '  a  ')", "trim('xa' from 'xxaxx')", "trim(both '\\x00'::bytea from '\\x000100'::bytea)",
		"position('lo' in 'hello')", "position('z' in 'hello')", "position('' in 'hello')", "position(NULL in 'x')",
		"position('\\x02'::bytea in '\\x010203'::bytea)",
		"extract(year from date '2020-05-17')", "extract(epoch from timestamp '2020-05-17 10:00:00.5')",
		"extract(hour from interval '25 hours')", "extract(YEAR from timestamptz '2020-01-01 10:00+00')",
		"extract(day from '2020-01-01')", "extract(foo from date '2020-01-01')",
		"overlay('hello' placing 'XX' from 2)", "overlay('hello' placing 'XX' from 2 for 3)", "overlay('hello' placing '' from 1 for 5)",
		"'abc' like 'a%'", "'abc' not like 'a%'", "'ABC' ilike 'a%'", "'ABC' not ilike 'a%'", "'a%c' like 'a!%c' escape '!'",
		"'abc' like 'a!%c' escape '!'", "'a_c' like 'a#_c' escape '#'", "'abc' like 'a%' escape ''", "'a\\c' like 'a\\c' escape ''",
		"'abc' like 'abc' escape 'xy'", "'abc' ~~ 'a_c'", "'abc' !~~* 'A_C'", "'É' ilike 'é'", "1 like '1'", "NULL like 'a'",
		"'abc' like NULL", "'\\x616263'::bytea like '\\x6125'::bytea", "'abc' like 'abc\\'", "'abd' like 'abc\\'",
		"concat('a', 1, NULL, true, 2.50, date '2020-01-01')", "concat()", "concat(NULL)", "concat_ws(',', 'a', NULL, 'b', 1)",
		"concat_ws(NULL, 'a')", "concat_ws(',')", "concat_ws(1, 2)", "concat('a')", "concat(1.5::real, interval '1 day')",
		"make_interval(days => 3)", "make_interval(1, 2)", "make_interval(years => 1, secs => 1.5)", "make_interval(hours => 2, mins => 30)",
		"make_interval(0, 0, 0, 0, 0, 0, 0)", "make_interval(foo => 1)", "make_interval(1, years => 2)",
		"round(2.5)", "round(2.5::float8)", "round(2.567, 2)", "round(2.5::float8, 1)", "round(5)", "trunc(5)", "trunc(-2.5)",
		"ceil(-1.5)", "floor(-1.5)", "sign(-3)", "mod(7, 3)", "mod(7.5, 2)", "power(2, 10)", "power(2.0, 10)", "pow(2, 0.5)",
		"sqrt(2)", "sqrt(2::numeric)", "sqrt(-1)", "ln(0)", "log(100)", "log(2, 8)", "exp(1)", "div(7, 2)", "abs(-3)",
		"length('héllo')", "lower('ÀÉ')", "upper('àé')", "initcap('hello WORLD')", "left('hello', 2)", "right('hello', -2)",
		"lpad('7', 3, '0')", "rpad('7', 3)", "repeat('ab', 3)", "reverse('abc')", "replace('aaa', 'a', 'b')",
		"split_part('a,b,c', ',', -1)", "starts_with('abc', 'ab')", "md5('abc')", "strpos('hello', 'l')",
		"date_trunc('month', timestamp '2020-05-17 10:00')", "date_trunc('day', timestamptz '2020-05-17 10:00+02')",
		"date_trunc('hour', interval '1 day 02:30')", "date_part('dow', date '2020-05-17')", "make_date(2020, 2, 29)",
		"make_timestamp(2020, 1, 2, 3, 4, 5.5)", "age(timestamp '2020-05-17', timestamp '2019-01-31')",
		"date_bin('15 minutes', timestamp '2020-02-11 15:44:17', timestamp '2001-01-01')", "nosuch(1)",
		"timestamp '2026-03-08 02:30' AT TIME ZONE 'America/New_York'", "timestamptz '2026-01-01 12:00+00' AT TIME ZONE 'Asia/Kolkata'",
		"timestamp '2026-06-01 12:00' AT TIME ZONE 'UTC'", "timestamp '2026-06-01 12:00' AT TIME ZONE 'Nowhere/Town'",
		"(timestamptz '2026-06-01 12:00+00' AT TIME ZONE 'Europe/Paris') AT TIME ZONE 'Europe/Paris'",
		"date_trunc('day', timestamptz '2026-03-29 12:00+00', 'Europe/Paris')", "date_trunc('month', timestamptz '2026-03-01 01:00+00', 'America/New_York')",
		"ARRAY[1, NULL] || ARRAY[2]", "array_to_string(ARRAY[1, NULL, 3], '-', '*')",
		"array_to_string(ARRAY['a', NULL], ',')", "string_to_array('a,b,,c', ',', '')", "string_to_array('', ',')",
		"string_to_array('abc', NULL)", "array_position(ARRAY['a', 'b', 'a'], 'a', 2)", "array_position(ARRAY[1], NULL)",
		"cardinality(ARRAY[1, 2])", "cardinality('{}'::int[])", "array_length('{}'::int[], 1)", "array_length(ARRAY[1], 2)",
		"array_upper(ARRAY[1, 2], 1)", "array_lower(ARRAY[1], 1)", "array_ndims(ARRAY[1])", "array_dims(ARRAY[1, 2])",
		"(ARRAY[1, 2, 3])[2]", "(ARRAY[1, 2, 3])[0]", "(ARRAY[1, 2, 3])[2:]", "(ARRAY[1, 2, 3])[:2]", "(ARRAY[1, 2, 3])[3:1]",
		"(ARRAY[1, 2, 3])[-5:9]", "(ARRAY[1, 2, 3])[NULL]", "array_remove(ARRAY[1, NULL, 1], NULL)", "array_cat(NULL, ARRAY[1])",
		"array_append(NULL::int[], NULL)", "ARRAY[1.5, 2] @> ARRAY[2.0]", "ARRAY['a'] && ARRAY['b']", "ARRAY[interval '1 day'] = ARRAY[interval '24 hours']",
		"ARRAY[]", "ARRAY[1, 'x']", "ARRAY[1, 2]::text[]", "ARRAY['1', '2']::int[]", "ARRAY[NULL]", "ARRAY['a', 'b']",
		"array_position(ARRAY[1, 2], 2, NULL)", "1 = ANY(ARRAY[2, 3])", "1 < ALL('{2,3}')", "'a' = ANY(ARRAY[1])",
		"1 + ANY(ARRAY[1])", "1 = ANY(1)", "cardinality(NULL::int[])", "(ARRAY[1])[1.6]", "(1)[1]",
		"regexp_replace('a', 'a', 'b')", "regexp_replace('abc', 'b', 'x', 'g')", "regexp_replace('abc', 'b', 'x', 2)",
		"regexp_match('abc', '(b)(c)')", "regexp_split_to_array('a b', ' ')", "regexp_count('aaa', 'a', 2)",
		"regexp_instr('abc', 'c')", "regexp_substr('abc', 'b.')", "regexp_like('abc', 'B', 'i')", "regexp_match(1, 1)",
		"pg_typeof(1)", "pg_typeof('a')", "pg_typeof(NULL)", "pg_typeof(ARRAY[1.5])", "pg_typeof(1, 2)", "pg_typeof()",
		"sind(30)", "cosd(60)", "atan2d(1, 1)", "sin('1')", "tanh(0.5)", "5 & 3", "5 | '2'", "5 # 1", "~5", "1 << 33",
		"-8 >> 1", "1::int2 << 15", "encode('abc', 'base64')", "decode('YWJj', 'base64')", "convert_to('é', 'LATIN1')",
		"convert_from('\\xe9', 'latin1')", "get_bit('\\x01'::bytea, 0)", "set_byte('\\x01'::bytea, 0, 2)",
		"bit_count('\\xff'::bytea)", "sha256('abc')", "substring('hello' from 'l+')", "substring('hello' from 'e(l+)')",
		"substring('hello' similar 'h%' escape '#')", "substring('hello' similar 'h#\"l+#\"o' escape '#')",
		"substring('hello' from 'h#\"%#\"' for '#')", "substring('hello', '%#\"l_#\"', '#')",
		"'abc' SIMILAR TO 'a%'", "'abc' NOT SIMILAR TO 'a%'", "'abc' SIMILAR TO '(a|b)%'", "NULL SIMILAR TO 'a'",
		"'a%' SIMILAR TO 'a!%' ESCAPE '!'", "'ab' SIMILAR TO 'a!%' ESCAPE '!'", "'abc' SIMILAR TO 'a' ESCAPE NULL",
		"'abc' SIMILAR TO 'abc' ESCAPE 'xy'", "'abc' SIMILAR TO 'a#\"b#\"c#\"' ESCAPE '#'", "1 SIMILAR TO '1'",
		"'abc' SIMILAR TO '(a'",
		"date_trunc('day', timestamptz '2020-01-01+00', 'CET')", "timestamp '2026-01-01' AT TIME ZONE 'EST'",
		"timestamp '2026-01-01' AT TIME ZONE 'UTC+3'", "timestamp '2026-01-01' AT TIME ZONE interval '1 hour'",
		"timestamptz '2026-01-01 00:00+00' AT TIME ZONE interval '-05:30'", "timestamp '2026-01-01' AT TIME ZONE interval '1 day'",
		"timestamptz '2026-07-01 00:00+00' AT TIME ZONE 'cest'", "timestamptz '2026-07-01 00:00+00' AT TIME ZONE 'europe/berlin'",
		"timestamptz '2026-07-01 00:00+00' AT TIME ZONE '+05'", "timestamptz '1850-07-01 00:00+00' AT TIME ZONE 'Europe/Berlin'",
		"date_trunc('month', timestamptz '2026-03-31 23:30+00', 'Europe/Berlin')", "date_trunc('hour', timestamptz '2026-10-25 00:30+00', 'Europe/Berlin')",
		"make_timestamptz(2026, 3, 29, 2, 30, 0, 'Europe/Berlin')", "make_timestamptz(2026, 10, 25, 2, 30, 0, 'Europe/Berlin')",
		"make_timestamptz(2026, 1, 1, 0, 0, 0, '+05:30')", "make_timestamptz(2026, 1, 1, 0, 0, 0, 'EST')", "make_timestamptz(2026, 1, 1, 0, 0, 0, '5')",
		"make_timestamptz(2026, 1, 1, 0, 0, 0, 'Mars/Base')",
		"extract(second from time '10:00:01.5')", "date_part('epoch', time '01:00')", "make_time(1, 2, 3.5)",
		"time '10:00' - time '12:30'", "time '23:00' + interval '2 hours'", "date '2026-01-01' + time '01:02'",
		"ARRAY[[1]]", "'{{1}}'::int[]", "ARRAY[[1, 2], [3, 4]]", "ARRAY[ARRAY[1.5], ARRAY[NULL]]", "ARRAY[[1], [2, 3]]",
		"('{{1,2},{3,4}}'::int[])[2][1]", "('{{1,2},{3,4}}'::int[])[1:2][2:]", "array_dims('[0:1][3:3]={{1},{2}}'::int[])",
		"to_json('{{1,2},{3,NULL}}'::int[])", "to_jsonb('[0:1][1:1]={{a},{b}}'::text[])",
		"json_build_array('{{1}}'::int[], 2)", "to_json('{}'::int[])", "array_length('{{1,2,3}}'::int[], 2)",
		"'{{1,2}}'::int[] || '{3,4}'::int[]", "array_append('{{1}}'::int[], 2)", "'[0:1]={1,2}'::int[] = '{1,2}'",
	}
	// What is rejected with 0A000 (PostgreSQL computes these).
	rejected := []string{
		"age(timestamp '2020-01-01')", "now()", "current_date", "random()",
		"clock_timestamp()", "regexp_match('ab', '(a)\\1')",
	}
	for _, expr := range rejected {
		if got := ourEvalExpr(t, expr); !strings.HasPrefix(got, "ERROR 0A000: ") {
			t.Errorf("%s: got %s, want a 0A000 error", expr, got)
		}
	}
	compareWithPostgres(t, exprs)
}

// compareWithPostgres evaluates each expression here and in PostgreSQL
// (in UTC, ISO dates, the postgres interval style and shortest floats)
// and demands the same value and type, or the same error.
func compareWithPostgres(t *testing.T, exprs []string) {
	t.Helper()
	compareWithPostgresIn(t, "UTC", exprs)
}

// compareWithPostgresIn is compareWithPostgres with the session time
// zone zone on both sides.
func compareWithPostgresIn(t *testing.T, zone string, exprs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	z, err := types.LoadZone(zone)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"SET TimeZone = '" + zone + "'", "SET DateStyle = 'ISO, MDY'",
		"SET IntervalStyle = 'postgres'", "SET extra_float_digits = 1"} {
		if _, err := conn.Exec(ctx, set).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	for _, expr := range exprs {
		want := pgEvalExpr(t, ctx, conn, expr)
		got := ourEvalExprIn(t, expr, z)
		if got != want {
			t.Errorf("in %s: %s\n  got  %s\n  want %s", zone, expr, got, want)
		}
	}
}

func pgEvalExpr(t *testing.T, ctx context.Context, conn *pgconn.PgConn, expr string) string {
	t.Helper()
	res, err := conn.Exec(ctx, "SELECT "+expr+", pg_typeof("+expr+")::text").ReadAll()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return fmt.Sprintf("ERROR %s: %s", pe.Code, pe.Message)
		}
		t.Fatalf("%s: %v", expr, err)
	}
	row := res[0].Rows[0]
	if row[0] == nil {
		return "NULL :: " + string(row[1])
	}
	return fmt.Sprintf("%q :: %s", row[0], row[1])
}

// ourEvalExpr binds and evaluates expr as a constant SELECT would.
func ourEvalExpr(t *testing.T, expr string) string {
	t.Helper()
	return ourEvalExprIn(t, expr, types.UTCZone)
}

// ourEvalExprIn is ourEvalExpr in the session time zone z.
func ourEvalExprIn(t *testing.T, expr string, z types.Zone) string {
	t.Helper()
	b := &Binder{Cat: testCatalog{}, Zone: z}
	n, _ := scalarNode(t, expr)
	e, err := b.Scalar(nil, n)
	if err == nil && e.Type().ID == types.Unknown {
		e, err = Coerce(e, types.Of(types.Text), "?column?")
	}
	if err != nil {
		return fmt.Sprintf("ERROR %s: %s", errs.SQLState(err), err)
	}
	v, err := e.Eval(nil)
	if err != nil {
		return fmt.Sprintf("ERROR %s: %s", errs.SQLState(err), err)
	}
	if v.IsNull() {
		return "NULL :: " + e.Type().ID.String()
	}
	return fmt.Sprintf("%q :: %s", types.FormatZone(v, e.Type(), z), e.Type().ID)
}
