package types

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/rockstream/rockstream/internal/errs"
	"pgregory.net/rapid"
)

// arrayInputs are array literals that exercise array_in's corners: white
// space, quoting, escapes, NULL spellings, dimension decorations and
// malformed structure.
var arrayInputs = map[string][]string{
	"integer[]": {"{}", "{ }", " {1,2,3} ", "{1, 2 ,3}", "{NULL}", "{null,NuLl}", "{1,NULL,3}",
		`{"1"}`, `{"NULL"}`, "{1,2", "{1,,2}", "{,}", "{1,}", "{1 2}", "1,2", "", "{}}", "{} x",
		"{{1,2},{3,4}}", "{{1},{2,3}}", "{1,{2}}", "{{}}", "[1:2]={1,2}", "[1:3]={1,2}", "[0:1]={1,2}",
		"[2:1]={1}", "[1:1]={}", "[1:2]{1,2}", "[1]={1}", "[1:2]={{1},{2}}", " [1:2] = {1,2}", "[a]={1}",
		"[1:]={1}", "[1:2={1,2}", "{1,x}", "{99999999999}", `{"1",2}`, `{"1" ,2}`, `{"1"2}`, `{1"2"}`,
		`{\1}`, `{1\}`, "{ 1 }", "{\t7\n}", "[1:1][1:1]={{1}}", "{1}{2}", "{{1,2}}", `{"}`,
		"{{1,NULL},{NULL,4}}", "{{{1,2}},{{3,4}}}", "{{1,2},{3}}", "{{1,2},3}", "[0:1][-2:-1]={{1,2},{3,4}}",
		"[1:2][1:1]={{1},{2}}", "[1:2][1:2]={{1},{2}}", "[1:2]={{1,2},{3,4}}", "[5:5]={7}", "[-3:-2]={7,8}",
		"{{{{{{1}}}}}}", "{{{{{{{1}}}}}}}", "[1][1][1][1][1][1][1]={{{{{{{1}}}}}}}", " { { 1 , 2 } , { 3 , 4 } } ",
		"{{},{}}", "{{1,2},{}}", "[2147483647:2147483648]={1,2}", "[2147483646:2147483647]={1,2}"},
	"text[]": {"{a,b}", `{"a b"," c ",d e}`, `{""}`, `{"",""}`, `{"NULL",NULL,null,"null"}`, `{a\,b}`,
		`{a\"b}`, `{"a\"b"}`, `{"a\\b"}`, `{a\\b}`, `{"{}"}`, `{\{x\}}`, `{ a , b }`, `{a\ }`,
		`{\ a}`, `{"a"   }`, `{ "a"}`, `{NULLx}`, `{xNULL}`, `{N\ULL}`, `{"a,b"}`, `{'a'}`,
		"{\"tab\there\"}", "{é,ü}", `{"\n"}`, `{a b c}`, `{a  b}`, `{"a" "b"}`, `{a "b"}`,
		`{"}"}`, `{"{"}`, `{\}}`, `{\\}`, `{"\\"}`, "{a\nb}",
		`{{a,"b c"},{NULL,"NULL"}}`, `{{"{}",\}},{x,""}}`, `[0:0][1:2]={{a,b}}`},
	"numeric(5,2)[]":         {"{1.234,NaN,-0.005}", "{1000}", "{1e2}"},
	"character varying(3)[]": {"{abc,abcd}", "{ab,\"abc   \"}"},
	"boolean[]":              {"{t,f,yes,NULL}", "{maybe}"},
	"double precision[]":     {"{1.5,NaN,-Infinity,1e300,-0}"},
	"real[]":                 {"{0.1,3.4e38}"},
	"bigint[]":               {"{9223372036854775807,-9223372036854775808}"},
	"smallint[]":             {"{32768}"},
	"date[]":                 {"{2026-01-02,infinity,-infinity}"},
	"timestamp[]":            {"{\"2026-01-02 03:04:05\",2026-01-02}"},
	"timestamptz[]":          {"{\"2026-01-02 03:04:05+02\"}"},
	"interval[]":             {"{\"1 day\",\"-1 mon 2 hours\",PT1H}"},
	"bytea[]":                {`{"\\\\x0102",abc}`, `{"\\\\xZZ"}`},
}

func TestOracleArrayInput(t *testing.T) {
	o := newOracle(t)
	for typ, texts := range arrayInputs {
		for _, text := range texts {
			o.check(t, l(typ, text))
			// Every accepted literal prints, and reads back, as in
			// PostgreSQL: the output is itself a literal.
			if v, _, err := l(typ, text).eval(t); err == nil {
				out := Format(v, mustType(t, typ))
				o.check(t, l(typ, out))
			}
		}
	}
}

func TestOracleArrayCasts(t *testing.T) {
	o := newOracle(t)
	for _, e := range []ex{
		cast{l("integer[]", "{1,NULL,3}"), "text", false},
		cast{l("integer[]", "{1,NULL,3}"), "bigint[]", false},
		cast{l("numeric[]", "{1.5,2.5,NULL}"), "integer[]", false},
		cast{l("text[]", "{1,2}"), "integer[]", false},
		cast{l("text[]", "{1,x}"), "integer[]", false},
		cast{l("text[]", "{abcd,ab}"), "character varying(2)[]", false},
		cast{l("text", "{1,2}"), "integer[]", false},
		cast{l("double precision[]", "{1.5,NaN}"), "numeric[]", false},
		cast{l("integer[]", "{1}"), "text[]", true},
		cast{l("integer[]", "{1}"), "integer", false},
		cast{l("integer", "1"), "integer[]", false},
		cast{l("date[]", "{2026-01-02}"), "timestamp[]", false},
		cast{l("integer[]", "[0:1][2:3]={{1,NULL},{3,4}}"), "numeric[]", false},
		cast{l("integer[]", "{{1,2},{3,4}}"), "text", false},
		cast{l("text[]", "{{1,2},{3,x}}"), "integer[]", false},
	} {
		o.check(t, e)
	}
}

func TestOracleArrayCompare(t *testing.T) {
	o := newOracle(t)
	lits := []string{"{}", "{1}", "{1,2}", "{1,NULL}", "{NULL}", "{2}", "{1,2,3}", "{NULL,1}", "{0,5}",
		"{{1,2}}", "{{1},{2}}", "[0:1]={1,2}", "[2:3]={1,2}", "[0:0][1:2]={{1,2}}", "{{1,2},{3,4}}",
		"{{{1,2}}}", "{{1,2,3},{4,5,6}}", "{{1,2},{3,5}}", "[0:1]={1,3}"}
	for _, a := range lits {
		for _, b := range lits {
			for _, op := range []string{"=", "<", ">=", "<>"} {
				o.check(t, bin{op, l("integer[]", a), l("integer[]", b)})
			}
		}
	}
}

func TestArrayTypeNames(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		name string
		oid  uint32
		typn string
	}{
		{ArrayType(Of(Int4)), "integer[]", 1007, "_int4"},
		{ArrayType(NumericType(10, 2)), "numeric(10,2)[]", 1231, "_numeric"},
		{ArrayType(VarcharType(5)), "character varying(5)[]", 1015, "_varchar"},
		{ArrayType(Of(TimestampTZ)), "timestamp with time zone[]", 1185, "_timestamptz"},
		{ArrayType(Of(Text)), "text[]", 1009, "_text"},
	} {
		if got := c.typ.String(); got != c.name {
			t.Errorf("%v: String = %q, want %q", c.typ, got, c.name)
		}
		if got := c.typ.OID(); got != c.oid {
			t.Errorf("%v: OID = %d, want %d", c.typ, got, c.oid)
		}
		if got, ok := TypeByOID(c.oid); !ok || got.ID != c.typ.ID {
			t.Errorf("TypeByOID(%d) = %v", c.oid, got)
		}
		if got := c.typ.TypName(); got != c.typn {
			t.Errorf("%v: TypName = %q, want %q", c.typ, got, c.typn)
		}
		if got, err := TypeByName([]string{c.typn}, nil); err != nil || got.ID != c.typ.ID {
			t.Errorf("TypeByName(%q) = %v, %v", c.typn, got, err)
		}
	}
}

// TestArrayTextRoundTrip checks that every array prints as a literal that
// reads back as the same array (elements with quotes, backslashes, braces,
// commas, white space, "NULL" and the empty string included), and that its
// binary format reads back too.
func TestArrayTextRoundTrip(t *testing.T) {
	nasty := rapid.Map(rapid.SliceOfN(rapid.SampledFrom([]string{
		"a", " ", "\t", "\"", "\\", "{", "}", ",", "NULL", "null", "é", "[1:2]=", "=", "x y"}), 0, 4),
		func(parts []string) Value { return MakeText(strings.Join(parts, "")) })
	rapid.Check(t, func(rt *rapid.T) {
		name := rapid.SampledFrom(binaryTestTypes).Draw(rt, "element type")
		et := binType(t, name)
		if et.ID == Varchar && et.Length >= 0 {
			et = Of(Varchar) // a length limit would cut the generated text
		}
		gen := binaryValueGen(et)
		if et.ID == Text || et.ID == Varchar {
			gen = rapid.OneOf(gen, nasty)
		}
		// An interval of -2^63 microseconds prints as text that neither
		// PostgreSQL nor RockStream reads back.
		gen = gen.Filter(func(v Value) bool { return v.kind != Interval || v.n != math.MinInt64 })
		elems := rapid.SliceOfN(rapid.OneOf(gen, rapid.Just(Null)), 0, 5).Draw(rt, "elements")
		at := ArrayType(et)
		a := MakeArray(et.ID, elems)
		text := Format(a, at)
		back, err := Parse(at, text)
		if err != nil {
			rt.Fatalf("Parse(%q): %v", text, err)
		}
		if Format(back, at) != text || Compare(a, back) != 0 {
			rt.Fatalf("%q read back as %q", text, Format(back, at))
		}
		bin, err := AppendBinary(nil, a, at)
		if err != nil {
			rt.Fatalf("AppendBinary(%q): %v", text, err)
		}
		if back, err = ParseBinary(bin, at); err != nil || Format(back, at) != text {
			rt.Fatalf("binary %x of %q read back as %q, %v", bin, text, Format(back, at), err)
		}
	})
}

// TestValueSize guards the size of Value: six words, arrays included
// (they share the reference field with numerics).
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n != 48 {
		t.Fatalf("Value is %d bytes, want 48", n)
	}
}

// TestArrayParseNoPanic feeds array_in strings built from its special
// characters: every one is accepted or refused with an error, never a
// panic, and an accepted one prints as a literal that reads back alike.
func TestArrayParseNoPanic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom([]string{
			"{", "}", "\"", "\\", ",", " ", "NULL", "1", "a", "[", "]", ":", "=", "-", "\t"}), 0, 16).Draw(rt, "parts")
		s := strings.Join(parts, "")
		for _, at := range []Type{ArrayType(Of(Int4)), ArrayType(Of(Text))} {
			v, err := Parse(at, s)
			if err != nil {
				if st := errs.SQLState(err); st != "22P02" && st != "0A000" && st != "2202E" && st != "22003" {
					rt.Fatalf("Parse(%s, %q): unexpected error %v (%s)", at, s, err, st)
				}
				continue
			}
			text := Format(v, at)
			if back, err := Parse(at, text); err != nil || Format(back, at) != text {
				rt.Fatalf("Parse(%s, %q) printed %q, which reads back as %v, %v", at, s, text, back, err)
			}
		}
	})
}

// TestOracleArrayInputRandom compares array_in with PostgreSQL's on
// strings built at random from its special characters: the same array
// text, or the same error.
func TestOracleArrayInputRandom(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"{", "}", "\"", "\\", ",", " ", "NULL", "1", "a", "[", "]", ":", "=", "-", "\t", "{}", "2"}
	for range 600 {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteString("{")
		}
		for range rng.IntN(10) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		if rng.IntN(2) == 0 {
			b.WriteString("}")
		}
		s := b.String()
		for _, typ := range []string{"integer[]", "text[]"} {
			want := o.eval(t, l(typ, s).sql())
			got := ours(t, l(typ, s))
			if got.sqlstate == "0A000" && want.sqlstate == "" {
				continue // a shape RockStream refuses (several dimensions, other bounds)
			}
			if !sameResult(got, want) {
				t.Errorf("%q::%s\n  got  %v\n  want %v", s, typ, got, want)
			}
		}
	}
}
