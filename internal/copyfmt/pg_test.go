package copyfmt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/types"
)

// The tests here hold copyfmt to PostgreSQL's own COPY: the same rows,
// copied out by PostgreSQL and encoded by copyfmt, must be the same bytes;
// PostgreSQL's output must decode to those rows; malformed input must fail
// as PostgreSQL fails.

// allTypes is a table with a column of every type, and rows of awkward
// values: NULLs, delimiters, quotes, backslashes, line breaks, multibyte
// text, empty strings, extreme numbers.
const allTypesDDL = `CREATE TABLE all_types (
	id int4, b bool, i2 int2, i8 int8, n numeric, n2 numeric(10,2), f4 float4, f8 float8,
	t text, vc varchar(12), by bytea, d date, ts timestamp, tz timestamptz, iv interval)`

var allTypesCols = []Column{
	{"id", types.Of(types.Int4)}, {"b", types.Of(types.Bool)}, {"i2", types.Of(types.Int2)},
	{"i8", types.Of(types.Int8)}, {"n", types.Of(types.Numeric)},
	{"n2", types.Type{ID: types.Numeric, Precision: 10, Scale: 2, Length: -1}},
	{"f4", types.Of(types.Float4)}, {"f8", types.Of(types.Float8)}, {"t", types.Of(types.Text)},
	{"vc", types.Type{ID: types.Varchar, Precision: -1, Scale: -1, Length: 12}},
	{"by", types.Of(types.Bytea)}, {"d", types.Of(types.Date)}, {"ts", types.Of(types.Timestamp)},
	{"tz", types.Of(types.TimestampTZ)}, {"iv", types.Of(types.Interval)},
}

var allTypesRows = []string{
	`(1, true, 32767, 9223372036854775807, 123456789012345678901234567890.123456789, 12345678.91, 3.4028235e38, 1.7976931348623157e308,
	  'plain', 'short', '\x00ff10', '2026-11-30', '2026-11-30 01:02:03.456789', '2026-11-30 01:02:03+02', '1 year 2 mons 3 days 04:05:06.7')`,
	`(2, false, -32768, -9223372036854775808, 'NaN', -0.01, '-Infinity', 'NaN',
	  E'tab\there\nnewline\rcr\\backslash', E'a,b;c|d"e', '\x', '0001-01-01', '1999-12-31 23:59:59', '1970-01-01 00:00:00+00', '-1 days -00:00:01')`,
	`(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(4, true, 0, 0, 0, 0, 0, -0, '', '', '', 'infinity', 'infinity', '-infinity', '0')`,
	`(5, true, 1, 1, 0.000000001, 1.5, 1e-38, 5e-324, E'\\N', 'NULL', E'\\x5c', '2000-02-29', '2000-02-29 12:00:00', '2000-02-29 12:00:00.5-08', '1 mon -1 days')`,
	`(6, false, 2, 2, 1e100, 99999999.99, 'Infinity', 'Infinity', 'é漢字🎉 "quoted" ''single''', 'ü"q''', E'\\xdeadbeef', '1999-01-08', '2026-01-01 00:00:00', '2026-06-15 12:34:56.123456+00', '100 years')`,
	`(7, true, 3, 3, -1.5, 0, 1.5, 0.1, E'\\.', '\.', NULL, '2026-11-30', NULL, NULL, '-2 years -3 mons')`,
	`(8, true, 4, 4, 2, 1, 2, 2, E'line1\nline2\r\nline3', 'x', NULL, NULL, NULL, NULL, NULL)`,
	`(9, true, 5, 5, 3, 2, 3, 3, E'ctl\x01\x1f\b\f\v', 'tab	in', NULL, NULL, NULL, NULL, NULL)`,
	`(10, true, 6, 6, 4, 3, 4, 4, ',', ';', NULL, NULL, NULL, NULL, NULL)`,
	`(11, true, 7, 7, 5, 4, 5, 5, '"', '''', NULL, NULL, NULL, NULL, NULL)`,
	`(12, true, 8, 8, 6, 5, 6, 6, 'n/a', 'a|b', NULL, NULL, NULL, NULL, NULL)`,
}

// pgConn connects to a fresh database on the test PostgreSQL, in UTC.
func pgConn(t *testing.T) *pgconn.PgConn {
	t.Helper()
	dsn := pgtest.NewDatabase(t, "copyfmt")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn+"&timezone=UTC")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func pgExec(t *testing.T, conn *pgconn.PgConn, sql string) []*pgconn.Result {
	t.Helper()
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

func pgCopyOut(t *testing.T, conn *pgconn.PgConn, sql string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := conn.CopyTo(context.Background(), &buf, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.Bytes()
}

// setUpAllTypes creates all_types in PostgreSQL and returns its rows as
// PostgreSQL's text results give them, parsed by types.Parse.
func setUpAllTypes(t *testing.T, conn *pgconn.PgConn) [][]types.Value {
	pgExec(t, conn, allTypesDDL)
	pgExec(t, conn, "INSERT INTO all_types VALUES "+strings.Join(allTypesRows, ", "))
	res := pgExec(t, conn, "SELECT * FROM all_types ORDER BY id")
	var rows [][]types.Value
	for _, r := range res[0].Rows {
		row := make([]types.Value, len(r))
		for i, v := range r {
			if v == nil {
				row[i] = types.Null
				continue
			}
			val, err := types.Parse(allTypesCols[i].Type, string(v))
			if err != nil {
				t.Fatalf("parsing PostgreSQL's %s %q: %v", allTypesCols[i].Name, v, err)
			}
			row[i] = val
		}
		rows = append(rows, row)
	}
	if len(rows) != len(allTypesRows) {
		t.Fatalf("PostgreSQL returned %d rows, want %d", len(rows), len(allTypesRows))
	}
	return rows
}

// copyCase is one set of COPY options, as PostgreSQL's statement gives
// them and as Options.
type copyCase struct {
	with string
	opts Options
}

var outCases = []copyCase{
	{"", Options{}},
	{"(FORMAT text, DELIMITER '|', NULL 'NIL')", Options{Delimiter: '|', Null: "NIL", Set: OptionSet{Delimiter: true, Null: true}}},
	{"(FORMAT text, DELIMITER ',', HEADER)", Options{Delimiter: ',', Header: HeaderLine, Set: OptionSet{Delimiter: true, Header: true}}},
	{"(FORMAT text, DELIMITER E'\\x01')", Options{Delimiter: 1, Set: OptionSet{Delimiter: true}}},
	{"(FORMAT csv)", Options{Format: CSV}},
	{"(FORMAT csv, HEADER)", Options{Format: CSV, Header: HeaderLine, Set: OptionSet{Header: true}}},
	{"(FORMAT csv, HEADER false)", Options{Format: CSV, Set: OptionSet{Header: true}}},
	{"(FORMAT csv, DELIMITER ';', NULL 'n/a', QUOTE '''')", Options{Format: CSV, Delimiter: ';', Null: "n/a", Quote: '\'', Set: OptionSet{Delimiter: true, Null: true, Quote: true}}},
	{"(FORMAT csv, DELIMITER '|', ESCAPE '\\')", Options{Format: CSV, Delimiter: '|', Escape: '\\', Set: OptionSet{Delimiter: true, Escape: true}}},
	{"(FORMAT csv, FORCE_QUOTE *)", Options{Format: CSV, ForceQuoteAll: true, Set: OptionSet{ForceQuote: true}}},
	{"(FORMAT csv, NULL 'NULL', FORCE_QUOTE (t, vc, n))", Options{Format: CSV, Null: "NULL", ForceQuote: forceCols("t", "vc", "n"), Set: OptionSet{Null: true, ForceQuote: true}}},
	{"(FORMAT binary)", Options{Format: Binary}},
	{"(FORMAT csv, DELIMITER E'\\t', QUOTE '|', ESCAPE '!')", Options{Format: CSV, Delimiter: '\t', Quote: '|', Escape: '!', Set: OptionSet{Delimiter: true, Quote: true, Escape: true}}},
}

func forceCols(names ...string) []bool {
	out := make([]bool, len(allTypesCols))
	for i, c := range allTypesCols {
		for _, n := range names {
			out[i] = out[i] || c.Name == n
		}
	}
	return out
}

func encodeAll(t *testing.T, opts Options, cols []Column, rows [][]types.Value) []byte {
	t.Helper()
	enc := NewEncoder(opts, cols)
	out := enc.AppendHeader(nil)
	for _, r := range rows {
		var err error
		if out, err = enc.AppendRow(out, r); err != nil {
			t.Fatal(err)
		}
	}
	return enc.AppendTrailer(out)
}

// decodeAll decodes data with opts, which must be normalized (the zero
// Options are taken as the text format's defaults).
func decodeAll(opts Options, rel string, cols []Column, data []byte) ([][]types.Value, error) {
	if opts.Delimiter == 0 {
		if err := opts.Normalize(true); err != nil {
			return nil, err
		}
	}
	dec := NewDecoder(bytes.NewReader(data), opts, rel, cols)
	var rows [][]types.Value
	for {
		r, err := dec.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
}

func sameRows(a, b [][]types.Value) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d rows, want %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Errorf("row %d: %d values, want %d", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			if x.IsNull() != y.IsNull() || types.Format(x, types.Type{}) != types.Format(y, types.Type{}) || x.Kind() != y.Kind() {
				return fmt.Errorf("row %d column %d: %q, want %q", i, j, types.Format(x, types.Type{}), types.Format(y, types.Type{}))
			}
		}
	}
	return nil
}

// TestEncodeMatchesPostgres: copyfmt's encoding of the rows is
// PostgreSQL's COPY TO output, byte for byte, and decodes back to them.
func TestEncodeMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	rows := setUpAllTypes(t, conn)
	for _, tc := range outCases {
		t.Run(tc.with, func(t *testing.T) {
			opts := tc.opts
			if err := opts.Normalize(false); err != nil {
				t.Fatal(err)
			}
			stmt := "COPY (SELECT * FROM all_types ORDER BY id) TO STDOUT"
			if tc.with != "" {
				stmt += " WITH " + tc.with
			}
			want := pgCopyOut(t, conn, stmt)
			got := encodeAll(t, opts, allTypesCols, rows)
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding differs from PostgreSQL's\n got: %q\nwant: %q", got, want)
			}
			in := opts
			in.ForceQuote, in.ForceQuoteAll, in.Set.ForceQuote = nil, false, false
			if in.Header == HeaderLine {
				in.Header = HeaderMatch
			}
			if err := in.Normalize(true); err != nil {
				t.Fatal(err)
			}
			back, err := decodeAll(in, "all_types", allTypesCols, want)
			if err != nil {
				t.Fatalf("decoding PostgreSQL's output: %v", err)
			}
			if err := sameRows(back, rows); err != nil {
				t.Fatalf("decoding PostgreSQL's output: %v", err)
			}
		})
	}
}
