package copyfmt

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// threeCols is the table the input tests copy into.
var threeCols = []Column{{"a", types.Of(types.Int4)}, {"b", types.Of(types.Text)}, {"c", types.Of(types.Int4)}}

// inCase is COPY input: options, PostgreSQL's WITH clause for them, and
// the data.
type inCase struct {
	name string
	with string
	opts Options
	data string
}

func textOpts() Options { return Options{} }
func csvOpts() Options  { return Options{Format: CSV} }

var goodInputs = []inCase{
	{"escapes", "", textOpts(), "1\t\\101\\x41\\x4g\\xz\\b\\f\\n\\r\\t\\v\\\\\\q\t2\n"},
	{"octal three digits", "", textOpts(), "1\t\\1011\\0777\t2\n"},
	{"backslash newline", "", textOpts(), "1\tline\\\nbreak\t2\n"},
	{"null and empty", "", textOpts(), "1\t\t\\N\n\\N\t\\\\N\t3\n"},
	{"no final newline", "", textOpts(), "1\tx\t2\n3\ty\t4"},
	{"crlf", "", textOpts(), "1\tx\t2\r\n3\ty\t4\r\n"},
	{"cr", "", textOpts(), "1\tx\t2\r3\ty\t4\r"},
	{"end marker", "", textOpts(), "1\tx\t2\n\\.\nignored garbage\n"},
	{"end marker after data", "", textOpts(), "1\tx\t2\n3\ty\t4\\.\n5\tz\n"},
	{"end marker crlf", "", textOpts(), "1\tx\t2\r\n\\.\r\n"},
	{"trailing backslash", "", textOpts(), "1\tx\t2\\"},
	{"multibyte", "", textOpts(), "1\té漢字🎉\t2\n"},
	{"custom null", "(NULL 'nil', DELIMITER '|')", Options{Null: "nil", Delimiter: '|', Set: OptionSet{Null: true, Delimiter: true}}, "nil|nil|3\n4|\\N|nil\n"},
	{"header skipped", "(HEADER)", Options{Header: HeaderLine, Set: OptionSet{Header: true}}, "whatever\tit\tsays\textra\n1\tx\t2\n"},
	{"header match", "(HEADER match)", Options{Header: HeaderMatch, Set: OptionSet{Header: true}}, "a\tb\tc\n1\tx\t2\n"},
	{"header only", "(HEADER)", Options{Header: HeaderLine, Set: OptionSet{Header: true}}, "a\tb\tc\n"},
	{"empty input", "", textOpts(), ""},
	{"csv basic", "(FORMAT csv)", csvOpts(), "1,x,2\n3,\"y,z\",4\n5,,6\n7,\"\",8\n"},
	{"csv quotes", "(FORMAT csv)", csvOpts(), "1,\"say \"\"hi\"\"\",2\n3,a\"b\"c,4\n5,\"a\"\"\"b,6\n"},
	{"csv multiline", "(FORMAT csv)", csvOpts(), "1,\"line1\nline2\r\nline3\",2\n3,x,4\n"},
	{"csv crlf", "(FORMAT csv)", csvOpts(), "1,x,2\r\n3,\"a\r\nb\",4\r\n"},
	{"csv backslash data", "(FORMAT csv)", csvOpts(), "1,\\.,2\n3,\\.x,4\n"},
	{"csv end marker", "(FORMAT csv)", csvOpts(), "1,x,2\n\\.\n3,y,4\n"},
	{"csv quoted end marker", "(FORMAT csv)", Options{Format: CSV}, "1,\"\\.\",2\n"},
	{"csv header", "(FORMAT csv, HEADER true)", Options{Format: CSV, Header: HeaderLine, Set: OptionSet{Header: true}}, "a,b,c\n1,x,2\n"},
	{"csv header match quoted", "(FORMAT csv, HEADER match)", Options{Format: CSV, Header: HeaderMatch, Set: OptionSet{Header: true}}, "\"a\",b,\"c\"\n1,x,2\n"},
	{"csv custom", "(FORMAT csv, DELIMITER ';', QUOTE '''', ESCAPE '\\', NULL 'NULL')", Options{Format: CSV, Delimiter: ';', Quote: '\'', Escape: '\\', Null: "NULL", Set: OptionSet{Delimiter: true, Quote: true, Escape: true, Null: true}}, "1;'it\\'s';2\n3;'NULL';NULL\n4;'a\\\\b';5\n"},
	{"csv force not null", "(FORMAT csv, FORCE_NOT_NULL (b))", Options{Format: CSV, ForceNotNull: []bool{false, true, false}, Set: OptionSet{ForceNotNull: true}}, "1,,2\n"},
	{"csv force null", "(FORMAT csv, FORCE_NULL (b, c))", Options{Format: CSV, ForceNull: []bool{false, true, true}, Set: OptionSet{ForceNull: true}}, "1,\"\",\"\"\n2,\"x\",3\n"},
	{"csv force null custom", "(FORMAT csv, NULL 'z', FORCE_NULL (b))", Options{Format: CSV, Null: "z", ForceNull: []bool{false, true, false}, Set: OptionSet{Null: true, ForceNull: true}}, "1,\"z\",2\n2,z,3\n"},
}

var badInputs = []inCase{
	{"missing column", "", textOpts(), "1\tx\n"},
	{"trailing backslash missing column", "", textOpts(), "1\tx\\"},
	{"csv backslash at line start", "(FORMAT csv)", csvOpts(), "1,x,2\n\\.x,y,z\n"},
	{"extra column", "", textOpts(), "1\tx\t2\t3\n"},
	{"empty line", "", textOpts(), "1\tx\t2\n\n"},
	{"bad integer", "", textOpts(), "z\tx\t2\n"},
	{"integer out of range", "", textOpts(), "1\tx\t99999999999\n"},
	{"long bad value", "", textOpts(), "1\tx\t" + strings.Repeat("é", 70) + "\n"},
	{"literal newline", "", textOpts(), "1\tx\t2\r\n1\tx\t3\n"},
	{"literal cr", "", textOpts(), "1\tx\t2\n1\tx\r3\n"},
	{"crlf broken", "", textOpts(), "1\tx\t2\r\n1\tx\r3\r\n"},
	{"zero byte escape", "", textOpts(), "1\ta\\0b\t2\n"},
	{"invalid utf8 escape", "", textOpts(), "1\ta\\xffb\t2\n"},
	{"corrupt end marker", "", textOpts(), "1\tx\t2\n\\.x\n"},
	{"end marker at eof", "", textOpts(), "1\tx\t2\n\\."},
	{"end marker style", "", textOpts(), "1\tx\t2\r\n\\.\n"},
	{"end marker style nl", "", textOpts(), "1\tx\t2\n\\.\r"},
	{"header match wrong name", "(HEADER match)", Options{Header: HeaderMatch, Set: OptionSet{Header: true}}, "a\tq\tc\n"},
	{"header match count", "(HEADER match)", Options{Header: HeaderMatch, Set: OptionSet{Header: true}}, "a\tb\n"},
	{"header match null", "(HEADER match)", Options{Header: HeaderMatch, Set: OptionSet{Header: true}}, "a\t\\N\tc\n"},
	{"csv unterminated", "(FORMAT csv)", csvOpts(), "1,\"open\n"},
	{"csv unquoted newline", "(FORMAT csv)", csvOpts(), "1,x,2\r\n1,x,3\n"},
	{"csv unquoted cr", "(FORMAT csv)", csvOpts(), "1,x,2\n1,x\r,3\n"},
	{"csv missing", "(FORMAT csv)", csvOpts(), "1,x\n"},
	{"csv extra", "(FORMAT csv)", csvOpts(), "1,x,2,\n"},
	{"csv bad int after multiline", "(FORMAT csv)", csvOpts(), "1,\"a\nb\nc\",q\n"},
	{"csv force not null int", "(FORMAT csv, FORCE_NOT_NULL (c))", Options{Format: CSV, ForceNotNull: []bool{false, false, true}, Set: OptionSet{ForceNotNull: true}}, "1,x,\n"},
}

// binaryData builds binary COPY data: the file header, then parts.
func binaryData(parts ...string) string {
	return string(appendBinaryHeader(nil)) + strings.Join(parts, "")
}

func binOpts() Options { return Options{Format: Binary} }

const (
	binInt4One  = "\x00\x00\x00\x04\x00\x00\x00\x01"
	binTextAB   = "\x00\x00\x00\x02ab"
	binNull     = "\xff\xff\xff\xff"
	binTrailer  = "\xff\xff"
	binThreeCol = "\x00\x03"
)

var binaryGood = []inCase{
	{"binary rows", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, binTextAB, binNull, binThreeCol, binNull, binNull, binInt4One, binTrailer)},
	{"binary no trailer", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, binTextAB, binNull)},
	{"binary header extension", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x03xyz" + binThreeCol + binInt4One + binTextAB + binNull + binTrailer},
	{"binary flags low bits", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x07\x00\x00\x00\x00" + binTrailer},
}

var binaryBad = []inCase{
	{"binary wrong signature", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x01\x00\x00\x00\x00\x00\x00\x00\x00"},
	{"binary short signature", "(FORMAT binary)", binOpts(), "PGCOPY"},
	{"binary missing flags", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00"},
	{"binary oids", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x01\x00\x00\x00\x00\x00\x00"},
	{"binary critical flags", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x02\x00\x00\x00\x00\x00\x00"},
	{"binary missing length", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00"},
	{"binary negative length", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\xff\xff\xff\xff"},
	{"binary short extension", "(FORMAT binary)", binOpts(), "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x05ab"},
	{"binary field count", "(FORMAT binary)", binOpts(), binaryData("\x00\x02", binInt4One, binTextAB, binTrailer)},
	{"binary eof in field", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, "\x00\x00\x00\x09ab")},
	{"binary eof before size", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, "\x00\x00")},
	{"binary bad field size", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, "\xff\xff\xff\xfe")},
	{"binary data after trailer", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, binTextAB, binNull, binTrailer, "x")},
	{"binary short int", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, "\x00\x00\x00\x03\x00\x00\x01", binTextAB, binNull, binTrailer)},
	{"binary long int", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, "\x00\x00\x00\x05\x00\x00\x00\x00\x01", binTextAB, binNull, binTrailer)},
	{"binary bad utf8", "(FORMAT binary)", binOpts(), binaryData(binThreeCol, binInt4One, "\x00\x00\x00\x02a\xff", binNull, binTrailer)},
}

func pgCopyIn(conn *pgconn.PgConn, sql, data string) error {
	_, err := conn.CopyFrom(context.Background(), strings.NewReader(data), sql)
	return err
}

// TestDecodeMatchesPostgres: input PostgreSQL accepts decodes to the rows
// PostgreSQL stores, and input it rejects fails with the same SQLSTATE,
// message and context line.
func TestDecodeMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	pgExec(t, conn, "CREATE TABLE three (a int4, b text, c int4)")
	stmt := func(tc inCase) string {
		s := "COPY three FROM STDIN"
		if tc.with != "" {
			s += " WITH " + tc.with
		}
		return s
	}
	for _, tc := range append(goodInputs[:len(goodInputs):len(goodInputs)], binaryGood...) {
		t.Run(tc.name, func(t *testing.T) {
			pgExec(t, conn, "TRUNCATE three")
			if err := pgCopyIn(conn, stmt(tc), tc.data); err != nil {
				t.Fatalf("PostgreSQL rejects the input: %v", err)
			}
			stored, err := decodeAll(Options{}, "three", threeCols, pgCopyOut(t, conn, "COPY three TO STDOUT"))
			if err != nil {
				t.Fatal(err)
			}
			opts := tc.opts
			if err := opts.Normalize(true); err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(opts, "three", threeCols, []byte(tc.data))
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if err := sameRows(got, stored); err != nil {
				t.Fatalf("decoded rows differ from PostgreSQL's: %v", err)
			}
		})
	}
	for _, tc := range append(badInputs[:len(badInputs):len(badInputs)], binaryBad...) {
		t.Run(tc.name, func(t *testing.T) {
			pgErr := pgCopyIn(conn, stmt(tc), tc.data)
			var pe *pgconn.PgError
			if !errors.As(pgErr, &pe) {
				t.Fatalf("PostgreSQL accepts the input (%v)", pgErr)
			}
			opts := tc.opts
			if err := opts.Normalize(true); err != nil {
				t.Fatal(err)
			}
			_, err := decodeAll(opts, "three", threeCols, []byte(tc.data))
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("decoding succeeds or fails without a code (%v); PostgreSQL: %s %s (%s)", err, pe.Code, pe.Message, pe.Where)
			}
			if e.SQLState != pe.Code || e.Message != pe.Message || e.Where != pe.Where {
				t.Fatalf("got  %s %s (%s)\nwant %s %s (%s)", e.SQLState, e.Message, e.Where, pe.Code, pe.Message, pe.Where)
			}
		})
	}
}

// TestOptionErrors: option combinations PostgreSQL rejects are rejected
// with its SQLSTATE and message.
func TestOptionErrors(t *testing.T) {
	conn := pgConn(t)
	pgExec(t, conn, "CREATE TABLE three (a int4, b text, c int4)")
	for _, tc := range []struct {
		with string
		from bool
		opts Options
	}{
		{"(FORMAT binary, DELIMITER ',')", true, Options{Format: Binary, Delimiter: ',', Set: OptionSet{Delimiter: true}}},
		{"(FORMAT binary, NULL 'x')", true, Options{Format: Binary, Null: "x", Set: OptionSet{Null: true}}},
		{"(FORMAT binary, HEADER)", true, Options{Format: Binary, Header: HeaderLine, Set: OptionSet{Header: true}}},
		{"(DELIMITER E'\\n')", true, Options{Delimiter: '\n', Set: OptionSet{Delimiter: true}}},
		{"(NULL E'a\\rb')", true, Options{Null: "a\rb", Set: OptionSet{Null: true}}},
		{"(DELIMITER 'a')", true, Options{Delimiter: 'a', Set: OptionSet{Delimiter: true}}},
		{"(DELIMITER '\\')", true, Options{Delimiter: '\\', Set: OptionSet{Delimiter: true}}},
		{"(HEADER match)", false, Options{Header: HeaderMatch, Set: OptionSet{Header: true}}},
		{"(QUOTE '\"')", true, Options{Quote: '"', Set: OptionSet{Quote: true}}},
		{"(FORMAT csv, DELIMITER '\"')", true, Options{Format: CSV, Delimiter: '"', Set: OptionSet{Delimiter: true}}},
		{"(ESCAPE '\\')", true, Options{Escape: '\\', Set: OptionSet{Escape: true}}},
		{"(FORMAT csv, FORCE_QUOTE *)", true, Options{Format: CSV, ForceQuoteAll: true, Set: OptionSet{ForceQuote: true}}},
		{"(FORCE_QUOTE *)", false, Options{ForceQuoteAll: true, Set: OptionSet{ForceQuote: true}}},
		{"(FORMAT csv, FORCE_NOT_NULL (a))", false, Options{Format: CSV, ForceNotNull: []bool{true, false, false}, Set: OptionSet{ForceNotNull: true}}},
		{"(FORCE_NOT_NULL (a))", true, Options{ForceNotNull: []bool{true, false, false}, Set: OptionSet{ForceNotNull: true}}},
		{"(FORMAT csv, FORCE_NULL (a))", false, Options{Format: CSV, ForceNull: []bool{true, false, false}, Set: OptionSet{ForceNull: true}}},
		{"(FORCE_NULL (a))", true, Options{ForceNull: []bool{true, false, false}, Set: OptionSet{ForceNull: true}}},
		{"(DELIMITER ',', NULL 'a,b')", true, Options{Delimiter: ',', Null: "a,b", Set: OptionSet{Delimiter: true, Null: true}}},
		{"(FORMAT csv, NULL 'a\"b')", true, Options{Format: CSV, Null: "a\"b", Set: OptionSet{Null: true}}},
	} {
		t.Run(tc.with, func(t *testing.T) {
			dir := "TO STDOUT"
			if tc.from {
				dir = "FROM STDIN"
			}
			sql := "COPY three " + dir + " WITH " + tc.with
			var pgErr error
			if tc.from {
				pgErr = pgCopyIn(conn, sql, "")
			} else {
				var buf bytes.Buffer
				_, pgErr = conn.CopyTo(context.Background(), &buf, sql)
			}
			var pe *pgconn.PgError
			if !errors.As(pgErr, &pe) {
				t.Fatalf("PostgreSQL accepts %s (%v)", sql, pgErr)
			}
			opts := tc.opts
			err := opts.Normalize(tc.from)
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted (%v); PostgreSQL: %s %s", err, pe.Code, pe.Message)
			}
			if e.SQLState != pe.Code || e.Message != pe.Message {
				t.Fatalf("got  %s %s\nwant %s %s", e.SQLState, e.Message, pe.Code, pe.Message)
			}
		})
	}
}
