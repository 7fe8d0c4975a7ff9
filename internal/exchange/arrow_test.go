package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
	"pgregory.net/rapid"
)

// sameEntries fails t unless got has exactly want's entries, in order,
// every value identical as zset.EncodeRow tells values apart.
func sameEntries(t interface {
	Helper()
	Fatalf(string, ...any)
}, got, want zset.Batch) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := zset.EncodeRow(nil, got[i].Row), zset.EncodeRow(nil, want[i].Row)
		if !bytes.Equal(g, w) || got[i].Weight != want[i].Weight {
			t.Fatalf("entry %d: got %v weight %d (% x), want %v weight %d (% x)",
				i, got[i].Row, got[i].Weight, g, want[i].Row, want[i].Weight, w)
		}
	}
}

func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := drawBatch(t, 20)
		roundTrip(t, b)
	})
}

// roundTrip fails t unless b decodes from its encoding exactly.
func roundTrip(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, b zset.Batch) {
	t.Helper()
	data, err := EncodeBatch(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	sameEntries(t, got, b)
}

// TestRoundTripManyRecords crosses the record batch size, so that a batch
// is several record batches in one stream.
func TestRoundTripManyRecords(t *testing.T) {
	long := strings.Repeat("x", 1000)
	var b zset.Batch
	for i := range 3000 {
		b = append(b, zset.Entry{Row: zset.Row{types.MakeInt(types.Int8, int64(i)), types.MakeText(long[:i%1000])}, Weight: 1})
	}
	data, err := EncodeBatch(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	_, stream, err := parseLayout(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for r.Next() {
		records++
	}
	r.Release()
	if records < 2 {
		t.Fatalf("%d record batches for %d bytes of text, want several", records, len(data))
	}
	got, err := DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	sameEntries(t, got, b)
}

// TestSchema shows the Arrow type each column kind travels as.
func TestSchema(t *testing.T) {
	b := zset.Batch{{Row: zset.Row{
		types.MakeBool(true), types.MakeInt(types.Int2, 1), types.MakeInt(types.Int4, 1), types.MakeInt(types.Int8, 1),
		types.MakeFloat4(1), types.MakeFloat8(1), types.MakeText("a"), types.MakeBytea([]byte{0}),
		types.MakeDate(0), types.MakeTimestamp(0), types.MakeTimestampTZ(0), types.MakeTime(0),
		types.MakeInterval(types.IntervalValue{Months: 1}), types.MakeTimeTZ(0, 0), types.MakeOID(1),
		types.MakeArray(types.Int4, nil), types.Null, types.MakeInt(types.Int4, 1),
	}, Weight: 1}, {Row: zset.Row{
		types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null,
		types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null,
		types.Null, types.MakeText("mixed"),
	}, Weight: -2}}
	cols, err := layoutOf(b)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, f := range schemaOf(cols).Fields() {
		enc, _ := f.Metadata.GetValue(metaEncoding)
		kind, _ := f.Metadata.GetValue(metaKind)
		fmt.Fprintf(&sb, "%s %s kind=%s %s\n", f.Name, f.Type, kind, enc)
	}
	want := `c0 bool kind=1 
c1 int16 kind=2 
c2 int32 kind=3 
c3 int64 kind=4 
c4 float32 kind=6 
c5 float64 kind=7 
c6 utf8 kind=8 
c7 binary kind=10 
c8 date32 kind=11 
c9 timestamp[us] kind=12 
c10 timestamp[us, tz=UTC] kind=13 
c11 time64[us] kind=16 
c12 binary kind=14 row
c13 binary kind=17 row
c14 binary kind=32 row
c15 binary kind=67 row
c16 null kind=0 
c17 binary kind=0 row
weight int64 kind= 
`
	if got := sb.String(); got != want {
		t.Fatalf("schema:\n%s\nwant:\n%s", got, want)
	}
	roundTrip(t, b)
}

func TestEncodeRejectsRaggedRows(t *testing.T) {
	b := zset.Batch{{Row: zset.Row{types.MakeBool(true)}, Weight: 1}, {Row: zset.Row{}, Weight: 1}}
	if _, err := EncodeBatch(nil, b); err == nil {
		t.Fatal("a batch of rows of different widths encoded")
	}
}

// TestDecodeCorrupt cuts and flips an encoded stream everywhere: every
// result is an error of SQLSTATE 08P01 or a batch, never a panic.
func TestDecodeCorrupt(t *testing.T) {
	b := zset.Batch{
		{Row: zset.Row{types.MakeText("abc"), mustNumeric(t, "1.50"), types.MakeTime(5)}, Weight: 3},
		{Row: zset.Row{types.Null, mustNumeric(t, "NaN"), types.MakeTime(maxTimeMicros)}, Weight: -1},
	}
	data, err := EncodeBatch(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, d []byte) {
		t.Helper()
		if _, err := DecodeBatch(d); err != nil && (!errors.Is(err, ErrMalformed) && errs.SQLState(err) != "XX000") {
			t.Fatalf("%s: error %v is not ErrMalformed", what, err)
		}
	}
	for n := range len(data) {
		if n == 0 {
			continue // the empty stream is the empty batch
		}
		if _, err := DecodeBatch(data[:n]); err == nil {
			t.Fatalf("a stream cut to %d of %d bytes decoded", n, len(data))
		}
		check(fmt.Sprintf("cut to %d", n), data[:n])
	}
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			d := bytes.Clone(data)
			d[i] ^= x
			check(fmt.Sprintf("byte %d ^ %#x", i, x), d)
		}
	}
}

func mustNumeric(t *testing.T, s string) types.Value {
	t.Helper()
	v, err := types.Parse(types.Of(types.Numeric), s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
