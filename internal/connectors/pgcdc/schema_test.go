package pgcdc

import (
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
)

// TestMapType reads typmods as pg_attribute stores them (the values are
// what PostgreSQL 15 writes for each declared type).
func TestMapType(t *testing.T) {
	for _, c := range []struct {
		oid    uint32
		typmod int32
		want   string
	}{
		{23, -1, "integer"},
		{1700, -1, "numeric"},
		{1700, 786439, "numeric(12,3)"},
		{1700, 133123, "numeric(2,-1)"},
		{1043, 24, "character varying(20)"},
		{1042, 8, "text"},
		{1184, 3, "timestamp(3) with time zone"},
		{1114, -1, "timestamp without time zone"},
		{1186, 2147418118, "interval(6)"},
		{1007, -1, "integer[]"},
	} {
		got, err := MapType(c.oid, c.typmod)
		if err != nil {
			t.Errorf("MapType(%d, %d): %v", c.oid, c.typmod, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("MapType(%d, %d) = %s, want %s", c.oid, c.typmod, got, c.want)
		}
	}
	if _, err := MapType(2950, -1); err == nil || !strings.Contains(err.Error(), "OID 2950 is not supported") {
		t.Errorf("uuid: %v", err)
	}
}

// TestCheckRelation describes each kind of upstream schema change.
func TestCheckRelation(t *testing.T) {
	int4, _ := MapType(23, -1)
	text, _ := MapType(25, -1)
	tbl := &Table{Schema: "public", Name: "item", Columns: []Column{
		{Name: "id", OID: 23, TypMod: -1, Type: int4},
		{Name: "name", OID: 25, TypMod: -1, Type: text},
	}}
	col := func(name string, oid uint32, typmod int32) relationColumn {
		return relationColumn{Name: name, OID: oid, TypMod: typmod}
	}
	for _, c := range []struct {
		cols []relationColumn
		want string
	}{
		{[]relationColumn{col("id", 23, -1), col("name", 25, -1)}, ""},
		{[]relationColumn{col("id", 23, -1), col("name", 25, -1), col("price", 1700, -1)}, `upstream table public.item changed: column "price" was added`},
		{[]relationColumn{col("id", 23, -1)}, `upstream table public.item changed: column "name" was dropped`},
		{[]relationColumn{col("id", 20, -1), col("name", 25, -1)}, `upstream table public.item changed: column "id" changed type from integer to bigint`},
		{[]relationColumn{col("id", 23, -1), col("name", 1043, 14)}, `upstream table public.item changed: column "name" changed type from text to character varying(10)`},
		{[]relationColumn{col("name", 25, -1), col("id", 23, -1)}, `upstream table public.item changed: columns were reordered (position 1 is now "name", was "id")`},
	} {
		err := checkRelation(tbl, c.cols)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%v: got %q, want %q", c.cols, got, c.want)
		}
	}
}

func TestProgressRoundTrip(t *testing.T) {
	p := Progress{Slot: "s", LSN: pglogrepl.LSN(0x1_0000_00A0)}
	got, ok, err := DecodeProgress(p.Encode())
	if err != nil || !ok || got != p {
		t.Fatalf("round trip: %v %v %v", got, ok, err)
	}
	if string(p.Encode()) != `{"v":1,"slot":"s","lsn":"1/A0"}` {
		t.Errorf("encoded as %s", p.Encode())
	}
	if _, ok, err := DecodeProgress(nil); ok || err != nil {
		t.Errorf("empty progress: %v %v", ok, err)
	}
	if _, _, err := DecodeProgress([]byte(`{"v":2}`)); err == nil {
		t.Error("an unknown version was accepted")
	}
}
