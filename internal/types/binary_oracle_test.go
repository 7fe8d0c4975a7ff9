package types

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rockstream/rockstream/internal/errs"
)

// The binary oracle tests hold AppendBinary and ParseBinary to PostgreSQL
// 15's send and receive functions, on edge values, random values and
// random bytes.

// sendFunction names each type's send function in pg_proc.
var sendFunction = map[TypeID]string{
	Bool: "boolsend", Int2: "int2send", Int4: "int4send", Int8: "int8send",
	Float4: "float4send", Float8: "float8send", Numeric: "numeric_send",
	Text: "textsend", Varchar: "varcharsend", Bytea: "byteasend", Date: "date_send",
	Timestamp: "timestamp_send", TimestampTZ: "timestamptz_send", Interval: "interval_send",
	Jsonb: "jsonb_send", TimeTZ: "timetz_send",
}

// binaryEdgeLiterals are values worth checking by hand, by type name; the
// base type's list applies to its typmod variants too, where the values
// fit.
var binaryEdgeLiterals = map[string][]string{
	"bool": {"t", "f"},
	"int2": {"-32768", "32767", "0", "-1", "1", "256"},
	"int4": {"-2147483648", "2147483647", "0", "-1", "65536"},
	"int8": {"-9223372036854775808", "9223372036854775807", "0", "-1", "4294967296"},
	"float4": {"0", "-0", "NaN", "-NaN", "Infinity", "-Infinity", "3.4028235e+38", "-3.4028235e+38",
		"1e-45", "1.1754944e-38", "0.1", "-1.5", "16777217"},
	"float8": {"0", "-0", "NaN", "-NaN", "Infinity", "-Infinity", "1.7976931348623157e+308", "5e-324",
		"2.2250738585072014e-308", "0.1", "1e-20", "-123456789.125", "9007199254740993"},
	"numeric": {"0", "-0.0", "0.000", "1e-20", "NaN", "Infinity", "-Infinity", "1", "-1", "9999", "10000",
		"10001", "99999999", "100000000", "0.0001", "0.00001", "0.1", "0.10000", "123.45", "-0.000123",
		"12345678901234567890.123456789", "-99999999999999999999999999999999999999.99",
		"1e100", "-1e-100", "1e1000", "1" + strings.Repeat("0", 2000) + ".5", "0." + strings.Repeat("0", 16382) + "1",
		strings.Repeat("9", 131072), "9." + strings.Repeat("9", 16383), "-12345.678"},
	"numeric(5,2)":   {"999.99", "-999.99", "0", "1.5", "0.004", "0.005", "NaN", "-0.001"},
	"numeric(3,-1)":  {"1234", "-9994", "5", "4", "0", "NaN"},
	"numeric(20,20)": {"0.12345678901234567890", "-0.99999999999999999999", "0", "NaN"},
	"text":           {"", "a", "é€😀", "it's", `back\slash`, "  spaces  ", strings.Repeat("long ", 500)},
	"varchar":        {"", "abc", "é€😀"},
	"varchar(3)":     {"", "abc", "é€😀", "ab "},
	"bytea":          {`\x`, `\x00`, `\x00ff10`, `\xdeadbeef`},
	"date": {"2000-01-01", "1999-12-31", "1970-01-01", "4714-11-24 BC", "5874897-12-31", "infinity",
		"-infinity", "0001-01-01 BC", "0001-01-01", "2026-11-30", "1900-02-28", "2000-02-29"},
	"timestamp": {"2000-01-01 00:00:00", "1999-12-31 23:59:59.999999", "4714-11-24 00:00:00 BC",
		"294246-12-31 23:59:59.999999", "infinity", "-infinity", "1970-01-01 00:00:00.000001",
		"0001-01-01 00:00:00 BC", "2026-11-30 01:02:03.456789"},
	"timestamp(0)": {"1990-01-01 00:00:00.5", "2010-01-01 00:00:00.5", "1969-12-31 23:59:59.5",
		"1999-12-31 23:59:59.5", "infinity"},
	"timestamptz": {"2000-01-01 00:00:00+00", "1999-12-31 23:59:59.999999+00", "4714-11-24 00:00:00+00 BC",
		"infinity", "-infinity", "2026-11-30 01:02:03.456789+05:30"},
	"timestamptz(3)": {"2026-11-30 01:02:03.4565+00", "1980-01-01 00:00:00.0005+00"},
	"interval": {"0", "1 mon -2 days 3 sec", "-178000000 years", "178000000 years", "-1 days +00:00:00.000001",
		"@ 1 hour ago", "2147483647 days", "-2147483648 days", "2562047788:00:54.775807",
		"-2562047788:00:54.775807", "1 year 2 mons 3 days 04:05:06.789"},
	"interval(2)": {"00:00:00.005", "-00:00:00.005", "1 day 00:00:00.125"},
	"jsonb":       {`{"b": 1, "a": [1.50, "x", null, true]}`, `1e2`, `"s\n"`, `[]`, `{}`, `null`},
	"timetz": {"00:00:00+00", "24:00:00-15:59:59", "23:59:59.999999+15:59:59", "10:30:15.123456+05:45",
		"12:00:00-00:00:01", "04:05:06.5+01:02:03"},
	"timetz(2)": {"23:59:59.995+01", "10:30:15.125-03:30", "00:00:00.004+00"},
}

// TestBinarySendOracle compares AppendBinary's bytes with what PostgreSQL's
// send function returns for the same value, and checks that ParseBinary
// reads PostgreSQL's bytes as the value PostgreSQL prints.
func TestBinarySendOracle(t *testing.T) {
	o := newOracle(t)
	seed := binaryOracleSeed(t)
	for _, name := range binaryTestTypes {
		typ := binType(t, name)
		t.Run(name, func(t *testing.T) {
			var lits []string
			base, _, _ := strings.Cut(name, "(")
			if base != name {
				lits = append(lits, binaryEdgeLiterals[name]...)
			}
			lits = append(lits, binaryEdgeLiterals[base]...)
			edges := len(lits)
			gen := binaryValueGen(typ)
			for i := range 300 {
				lits = append(lits, Format(gen.Example(seed+i), typ))
			}
			// Our values, from the same text PostgreSQL reads.
			var vals []Value
			var rows []string
			unreadable := 0
			for i, lit := range lits {
				v, err := Parse(typ, lit)
				switch {
				case err == nil:
				case i < edges && base != name && errs.SQLState(err) == "22003":
					continue // an edge of the base type that the typmod rejects
				case i >= edges && typ.ID == Interval:
					// An interval of -2^63 microseconds prints as text that
					// neither PostgreSQL nor RockStream reads back.
					unreadable++
					continue
				default:
					t.Fatalf("Parse(%s, %q): %v", name, lit, err)
				}
				lits[len(vals)] = lit
				vals = append(vals, v)
				rows = append(rows, fmt.Sprintf("(%d, %s::%s)", len(rows), sqlQuote(lit), name))
			}
			if unreadable > 10 {
				t.Fatalf("%d of %d random values do not read back from their text", unreadable, len(lits)-edges)
			}
			res, err := o.exec(fmt.Sprintf("SELECT x, %s(x) FROM (VALUES %s) v(i, x) ORDER BY i",
				sendFunction[typ.ID], strings.Join(rows, ", ")))
			if err != nil {
				t.Fatalf("PostgreSQL: %v", err)
			}
			pgRows := res[0].Rows
			if len(pgRows) != len(vals) {
				t.Fatalf("PostgreSQL returned %d rows for %d values", len(pgRows), len(vals))
			}
			for i, v := range vals {
				pgText, pgBytes := string(pgRows[i][0]), decodeByteaText(t, pgRows[i][1])
				if got := Format(v, typ); got != pgText {
					t.Errorf("text of %q: got %q, PostgreSQL %q", lits[i], got, pgText)
				}
				got, err := AppendBinary(nil, v, typ)
				if err != nil || string(got) != string(pgBytes) {
					t.Errorf("%s(%s): got %x, %v; PostgreSQL %x", sendFunction[typ.ID], pgText, got, err, pgBytes)
				}
				back, err := ParseBinary(pgBytes, typ)
				if err != nil || Format(back, typ) != pgText {
					t.Errorf("ParseBinary(%x) = %q, %v; PostgreSQL prints %q", pgBytes, Format(back, typ), err, pgText)
				}
			}
		})
	}
}

// TestBinaryReceiveOracle loads bytes into a PostgreSQL column of each
// type with COPY ... (FORMAT binary), which runs the type's receive
// function with the column's typmod, and demands that ParseBinary accept
// exactly what PostgreSQL accepts, with the same value, and reject the
// rest with the same SQLSTATE and message.
func TestBinaryReceiveOracle(t *testing.T) {
	o := newOracle(t)
	seed := binaryOracleSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	for k, name := range binaryTestTypes {
		typ := binType(t, name)
		t.Run(name, func(t *testing.T) {
			table := fmt.Sprintf("binary_recv_%d", k)
			if _, err := o.exec(fmt.Sprintf("CREATE TEMP TABLE %s (i int4, v %s)", table, name)); err != nil {
				t.Fatal(err)
			}
			cases := binaryReceiveCases(typ, seed, rng)
			var accepted [][]byte
			var want []string
			for _, src := range cases {
				v, err := ParseBinary(src, typ)
				if err != nil {
					// Rejected here: PostgreSQL must reject it alike.
					got := errs.SQLState(err) + " " + err.Error()
					if pg := o.copyBinary(t, table, [][]byte{src}); pg != got {
						t.Errorf("%x: got %s; PostgreSQL %s", src, got, pg)
						o.exec("TRUNCATE " + table)
					}
					continue
				}
				accepted = append(accepted, src)
				want = append(want, Format(v, typ))
			}
			if pg := o.copyBinary(t, table, accepted); pg != "" {
				// Find the values PostgreSQL rejects.
				for _, src := range accepted {
					if pg := o.copyBinary(t, table, [][]byte{src}); pg != "" {
						t.Errorf("%x: accepted here; PostgreSQL %s", src, pg)
					}
				}
				return
			}
			res, err := o.exec("SELECT v FROM " + table + " ORDER BY i")
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range res[0].Rows {
				if string(row[0]) != want[i] {
					t.Errorf("%x: got %q; PostgreSQL %q", accepted[i], want[i], row[0])
				}
			}
			t.Logf("%d accepted, %d rejected", len(accepted), len(cases)-len(accepted))
		})
	}
}

// binaryOracleSeed returns the seed of the random values and bytes:
// ROCKSTREAM_BINARY_SEED when set (to explore), else a fixed one, so that
// CI's verdict is reproducible.
func binaryOracleSeed(t *testing.T) int {
	seed := 15
	if s := os.Getenv("ROCKSTREAM_BINARY_SEED"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ROCKSTREAM_BINARY_SEED=%q: %v", s, err)
		}
		seed = n
		t.Logf("seed %d", seed)
	}
	return seed
}

// copyBinary loads one row per value into table (columns i int4, v) with
// COPY FROM STDIN (FORMAT binary) and returns PostgreSQL's error as
// "SQLSTATE message", or "" when the load succeeded.
func (o *oracle) copyBinary(t *testing.T, table string, values [][]byte) string {
	t.Helper()
	data := []byte("PGCOPY\n\xff\r\n\x00")
	data = binary.BigEndian.AppendUint32(data, 0) // flags
	data = binary.BigEndian.AppendUint32(data, 0) // header extension length
	for i, v := range values {
		data = binary.BigEndian.AppendUint16(data, 2)
		data = binary.BigEndian.AppendUint32(data, 4)
		data = binary.BigEndian.AppendUint32(data, uint32(i))
		data = binary.BigEndian.AppendUint32(data, uint32(len(v)))
		data = append(data, v...)
	}
	data = binary.BigEndian.AppendUint16(data, 0xFFFF)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := o.conn.CopyFrom(ctx, strings.NewReader(string(data)), "COPY "+table+" FROM STDIN (FORMAT binary)")
	if err == nil {
		return ""
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("COPY: %v", err)
	}
	return pe.Code + " " + pe.Message
}

// binaryReceiveCases returns byte strings for typ's receive function: the
// encodings of random values, the same cut short or overlong, and random
// bytes shaped like the type's format.
func binaryReceiveCases(typ Type, seed int, rng *rand.Rand) [][]byte {
	var cases [][]byte
	gen := binaryValueGen(typ)
	for i := range 100 {
		b, err := AppendBinary(nil, gen.Example(seed+i), typ)
		if err != nil {
			panic(err)
		}
		cases = append(cases, b)
		if i < 10 {
			if len(b) > 0 {
				cases = append(cases, b[:len(b)-1])
			}
			cases = append(cases, append(b[:len(b):len(b)], 0))
		}
	}
	cases = append(cases, []byte{})
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	switch typ.ID {
	case Bool:
		for _, c := range []byte{0, 1, 2, 0x80, 0xff} {
			cases = append(cases, []byte{c})
		}
	case Int2, Int4, Int8, Float4, Float8, Interval:
		n := map[TypeID]int{Int2: 2, Int4: 4, Int8: 8, Float4: 4, Float8: 8, Interval: 16}[typ.ID]
		for range 30 {
			cases = append(cases, randBytes(n))
		}
	case TimeTZ:
		for _, c := range [][2]int64{{-1, 0}, {microsPerDay + 1, 0}, {0, tzDispLimit}, {0, -tzDispLimit}, {0, tzDispLimit - 1},
			{microsPerDay, -tzDispLimit + 1}, {math.MaxInt64, 0}, {0, math.MinInt32}} {
			b := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(c[0])), uint32(int32(c[1])))
			cases = append(cases, b, b[:8], b[:10])
		}
		for range 30 {
			cases = append(cases, randBytes(12))
		}
	case Date:
		// PostgreSQL's date range in its own days: [-2451545, 2145031949).
		for _, d := range []int64{-2451545, -2451546, 2145031948, 2145031949, math.MinInt32 + 1, math.MaxInt32 - 1} {
			cases = append(cases, binary.BigEndian.AppendUint32(nil, uint32(d)))
		}
		for range 30 {
			cases = append(cases, randBytes(4))
		}
	case Timestamp, TimestampTZ:
		// PostgreSQL's timestamp range in its own microseconds:
		// [MIN_TIMESTAMP, END_TIMESTAMP). RockStream's ends earlier
		// (doc.go); timestamps in between are not drawn.
		edges := []int64{-211813488000000000, -211813488000000001, math.MinInt64 + 1, -pgEpochMicros}
		if typ.Precision < 0 {
			// The last timestamp here: rounded to a precision, it would be
			// past it, yet within PostgreSQL's range.
			edges = append(edges, math.MaxInt64-pgEpochMicros-1)
		}
		for _, ts := range edges {
			cases = append(cases, binary.BigEndian.AppendUint64(nil, uint64(ts)))
		}
		for range 30 {
			b := randBytes(8)
			if ts := int64(binary.BigEndian.Uint64(b)); ts >= math.MaxInt64-pgEpochMicros && ts < 9223371331200000000 {
				continue
			}
			cases = append(cases, b)
		}
	case Numeric:
		for range 150 {
			cases = append(cases, randomNumericBinary(rng))
		}
	case Text, Varchar:
		alphabet := []byte{'a', ' ', 0, 0xc3, 0xa9, 0x28, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0,
			0xbf, 0xff, 0xc0, 0xc1, 0xf4, 0x90, 0x8f, 0xf5, 0xe0}
		for range 100 {
			b := make([]byte, rng.IntN(7))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			cases = append(cases, b)
		}
	case Bytea:
		for range 10 {
			cases = append(cases, randBytes(rng.IntN(20)))
		}
	}
	return cases
}

// randomNumericBinary returns numeric_recv input that is usually almost
// valid: header fields drawn from valid values and their edges, digits
// mostly in range, and a digit count that sometimes disagrees with the
// digits present.
func randomNumericBinary(rng *rand.Rand) []byte {
	pick := func(xs ...uint16) uint16 { return xs[rng.IntN(len(xs))] }
	ndigits := rng.IntN(6)
	weight := pick(0, 1, 2, 0xffff, 0xfffe, 0x7fff, 0x8000, 0xfff0, uint16(rng.Uint32()))
	sign := pick(0, 0x4000, 0xc000, 0xd000, 0xf000, 0, 0x4000, uint16(rng.Uint32()))
	dscale := pick(0, 1, 2, 3, 4, 5, 8, 20, 0x3fff, 0x4000, uint16(rng.Uint32()))
	b := appendNumericBinHeader(nil, uint16(ndigits), int16(weight), sign, dscale)
	present := ndigits
	if rng.IntN(8) == 0 {
		present = rng.IntN(7)
	}
	for range present {
		d := uint16(rng.IntN(10000))
		switch rng.IntN(12) {
		case 0:
			d = uint16(rng.Uint32())
		case 1:
			d = 0
		case 2:
			d = 9999
		}
		b = binary.BigEndian.AppendUint16(b, d)
	}
	if rng.IntN(10) == 0 && len(b) > 0 {
		b = b[:rng.IntN(len(b))]
	}
	return b
}

// sqlQuote returns s as an SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// decodeByteaText decodes bytea_out's hex text.
func decodeByteaText(t *testing.T, text []byte) []byte {
	t.Helper()
	b, err := ParseBytea(string(text))
	if err != nil {
		t.Fatalf("bytea %q: %v", text, err)
	}
	return []byte(b)
}

// TestBinaryBindOracle sends bytes as binary bind parameters, where the
// receive function runs without a typmod and a parameter's leftover bytes
// get their own message, and compares with BindParameterError's report.
func TestBinaryBindOracle(t *testing.T) {
	o := newOracle(t)
	seed := binaryOracleSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 4))
	for _, name := range binaryTestTypes {
		typ := binType(t, name)
		if typ.Precision >= 0 || typ.Length >= 0 {
			continue // a parameter has no typmod
		}
		t.Run(name, func(t *testing.T) {
			for i, src := range binaryReceiveCases(typ, seed, rng) {
				if i%3 != 0 {
					continue // a third of the cases: each is a round trip
				}
				if src == nil {
					src = []byte{} // nil would be a NULL parameter
				}
				got := ""
				v, err := ParseBinary(src, typ)
				if err != nil {
					err = BindParameterError(err, 2)
					got = errs.SQLState(err) + " " + err.Error()
				} else {
					got = Format(v, typ)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res := o.conn.ExecParams(ctx, "SELECT $1::int4, $2", [][]byte{[]byte("1"), src},
					[]uint32{23, typ.OID()}, []int16{0, 1}, nil).Read()
				cancel()
				want := ""
				if res.Err != nil {
					var pe *pgconn.PgError
					if !errors.As(res.Err, &pe) {
						t.Fatal(res.Err)
					}
					want = pe.Code + " " + pe.Message
				} else {
					want = string(res.Rows[0][1])
				}
				if got != want {
					t.Errorf("parameter %x: got %s; PostgreSQL %s", src, got, want)
				}
			}
		})
	}
}
