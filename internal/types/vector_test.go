package types

import "testing"

// TestVectorTypes checks int2vector's and oidvector's PostgreSQL facts:
// OIDs, names, space-separated text and zero-based subscripts.
func TestVectorTypes(t *testing.T) {
	i2 := Int2VectorType()
	ov := OidVectorType()
	if i2.OID() != 22 || ov.OID() != 30 {
		t.Fatalf("OIDs %d %d, want 22 30", i2.OID(), ov.OID())
	}
	if i2.String() != "int2vector" || ov.String() != "oidvector" || ov.TypName() != "oidvector" {
		t.Fatalf("names %q %q", i2.String(), ov.String())
	}
	if e := i2.Elem(); e != Of(Int2) {
		t.Fatalf("element type %v", e)
	}
	if got, ok := TypeByOID(30); !ok || got != ov {
		t.Fatalf("TypeByOID(30) = %v %v", got, ok)
	}
	keys := MakeArray(Int2, []Value{MakeInt(Int2, 1), MakeInt(Int2, 3)})
	if s := Format(keys, i2); s != "1 3" {
		t.Fatalf("int2vector text %q, want %q", s, "1 3")
	}
	if s := Format(keys, ArrayType(Of(Int2))); s != "{1,3}" {
		t.Fatalf("int2[] text %q", s)
	}
	oids := MakeArray(Oid, []Value{MakeOID(23), MakeOID(4294967295)})
	if s := Format(oids, ov); s != "23 4294967295" {
		t.Fatalf("oidvector text %q", s)
	}
	if s := Format(MakeArray(Oid, nil), ov); s != "" {
		t.Fatalf("empty oidvector text %q", s)
	}
	for i, want := range map[int64]Value{-1: Null, 0: MakeInt(Int2, 1), 1: MakeInt(Int2, 3), 2: Null} {
		if got := VectorSubscript(keys, MakeInt(Int4, i)); Compare(got, want) != 0 || got.IsNull() != want.IsNull() {
			t.Fatalf("indkey[%d] = %v, want %v", i, got, want)
		}
	}
}
