package types

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
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
		`{\1}`, `{1\}`, "{ 1 }", "{\t7\n}", "[1:1][1:1]={{1}}", "{1}{2}", "{{1,2}}", `{"}`},
	"text[]": {"{a,b}", `{"a b"," c ",d e}`, `{""}`, `{"",""}`, `{"NULL",NULL,null,"null"}`, `{a\,b}`,
		`{a\"b}`, `{"a\"b"}`, `{"a\\b"}`, `{a\\b}`, `{"{}"}`, `{\{x\}}`, `{ a , b }`, `{a\ }`,
		`{\ a}`, `{"a"   }`, `{ "a"}`, `{NULLx}`, `{xNULL}`, `{N\ULL}`, `{"a,b"}`, `{'a'}`,
		"{\"tab\there\"}", "{é,ü}", `{"\n"}`, `{a b c}`, `{a  b}`, `{"a" "b"}`, `{a "b"}`,
		`{"}"}`, `{"{"}`, `{\}}`, `{\\}`, `{"\\"}`, "{a\nb}"},
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

// refusedArrayInputs are literals PostgreSQL accepts and RockStream
// refuses with 0A000: more than one dimension, lower bounds other than 1.
var refusedArrayInputs = map[string]bool{
	"{{1,2},{3,4}}": true, "[0:1]={1,2}": true, "[1:1][1:1]={{1}}": true, "{{1,2}}": true,
}

func TestOracleArrayInput(t *testing.T) {
	o := newOracle(t)
	for typ, texts := range arrayInputs {
		for _, text := range texts {
			if refusedArrayInputs[text] {
				if want := o.eval(t, l(typ, text).sql()); want.sqlstate != "" {
					t.Errorf("%s: PostgreSQL refuses it too: %v", text, want)
				}
				if got := ours(t, l(typ, text)); got.sqlstate != "0A000" {
					t.Errorf("%s: got %v, want 0A000", text, got)
				}
				continue
			}
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
	} {
		o.check(t, e)
	}
}

func TestOracleArrayCompare(t *testing.T) {
	o := newOracle(t)
	lits := []string{"{}", "{1}", "{1,2}", "{1,NULL}", "{NULL}", "{2}", "{1,2,3}", "{NULL,1}", "{0,5}"}
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

func TestArrayMultidimensionalRefused(t *testing.T) {
	_, err := Parse(ArrayType(Of(Int4)), "{{1,2},{3,4}}")
	if errs.SQLState(err) != "0A000" || !strings.Contains(err.Error(), "multidimensional") {
		t.Fatalf("got %v", err)
	}
}
