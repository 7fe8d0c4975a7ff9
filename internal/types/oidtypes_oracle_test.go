package types

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestOracleCatalogTypes compares the text input and output, casts and
// comparisons of oid, name and "char" with PostgreSQL. (The OID alias
// types need a catalog to print names; the runtime's catalog script tests
// them.)
func TestOracleCatalogTypes(t *testing.T) {
	o := newOracle(t)
	long := strings.Repeat("x", 62) + "é" + "tail" // 'é' straddles byte 63
	var cases []ex
	for _, s := range []string{"0", "4294967295", "4294967296", "-1", "-2147483648", "-2147483649",
		" 12 ", "abc", "", "1.5", "+5", "00042", "1e3"} {
		cases = append(cases, l("oid", s))
	}
	for _, s := range []string{"orders", "", "MixedCase", long, strings.Repeat("n", 70)} {
		cases = append(cases, l("name", s), cast{e: txt(s), typ: "name"})
	}
	for _, s := range []string{"r", "abc", "", `\101`, `\303`, "é", `\0`} {
		cases = append(cases, lit{typ: "\"char\"", text: s})
	}
	for _, e := range []ex{i4(-1), i4(0), i4(2147483647), i8(4294967295), i8(4294967296), i8(-1),
		i8(-2147483649), i2(-5)} {
		cases = append(cases, cast{e: e, typ: "oid"})
	}
	for _, e := range []ex{l("oid", "4294967295"), l("oid", "7")} {
		cases = append(cases, cast{e: e, typ: "integer"}, cast{e: e, typ: "bigint"}, cast{e: e, typ: "text"})
	}
	cases = append(cases,
		cast{e: l("name", "abc"), typ: "text"}, cast{e: l("name", "abc"), typ: "character varying(2)"},
		cast{e: lit{typ: "\"char\"", text: "q"}, typ: "text"}, cast{e: txt("xyz"), typ: "\"char\""},
		cast{e: i4(65), typ: "\"char\""}, cast{e: i4(200), typ: "\"char\""},
		bin{"<", l("oid", "4294967295"), l("oid", "1")}, bin{"=", l("oid", "7"), i4(7)},
		bin{">", l("oid", "3000000000"), i8(1)}, bin{"=", l("oid", "16384"), u("16384")},
		bin{"=", l("name", "abc"), u("abc")}, bin{"<", l("name", "abc"), txt("abd")},
		bin{"=", txt("pg_class"), l("name", "pg_class")}, bin{"||", l("name", "ab"), txt("c")},
		bin{"=", lit{typ: "\"char\"", text: "r"}, u("r")}, bin{"<>", lit{typ: "\"char\"", text: "r"}, u("v")},
	)
	for _, e := range cases {
		o.check(t, e)
	}
}

// TestOracleRegexMatch compares the regular-expression match operators
// with PostgreSQL over a corpus of the patterns catalog queries use and
// the ARE features the translation handles; patterns the translation
// refuses must fail with 2201B here (PostgreSQL runs them).
func TestOracleRegexMatch(t *testing.T) {
	o := newOracle(t)
	subjects := []string{"", "orders", "ORDERS", "pg_toast", "pg_catalog", "public", "information_schema",
		"a\nb", "line1\nline2", "x.y", "a]b", "tab\there", "naïve", "123abc", "abc123", "foo bar", "a-b_c",
		"ab", "aab", "abab", "a{2}"}
	patterns := []string{
		"^pg_", "^pg_toast", "^(orders)$", "^(ord.*)$", "^(public)$", "ORD", "(?i)ord", "^$", ".", "^.$",
		"a.b", "^a.b$", "^line2", "line1$", "[[:digit:]]+", "[[:alpha:]]+$", "^[^_]*$", "[]a]", "[^]a]",
		`\d{3}`, `\s`, `\w+`, `\W`, `\Ad`, `c\Z`, `\yabc`, `abc\y`, `\Ybc`, "a{2}", "a{2,}", "(ab)+$",
		"(?:ab){2}", "a|b", "x\\.y", `a\-b`, "^(a+)+$", "naï", "[a-c]{2}", "fo+ ba?r", "***=a{2}", "***:^ab",
		"(?c)ORD", "^[[:upper:]]+$", "a*?b", "\\t", "[.]", `\mabc`, `abc\M`, "[[:<:]]abc", "(?x)a b", "(?n)^line2",
		"(?w)^line2", "(?p)a.b", "(?q)a{2}", "(?x)a[ ]b # comment", "(?i)NAÏVE", "(?s)a.b",
	}
	for _, p := range patterns {
		for _, s := range subjects {
			if strings.Contains(p, `\y`) || strings.Contains(p, `\Y`) || strings.Contains(p, `\m`) ||
				strings.Contains(p, `\M`) || strings.Contains(p, "[[:<:]]") {
				if s == "naïve" {
					// RE2's word boundaries are ASCII: refused.
					if got := ours(t, bin{"~", txt(s), txt(p)}); got.sqlstate != "0A000" {
						t.Errorf("%q ~ %q: got %v, want a 0A000 error", s, p, got)
					}
					continue
				}
			}
			for _, op := range []string{"~", "~*", "!~", "!~*"} {
				o.check(t, bin{op, txt(s), txt(p)})
			}
		}
	}
	for _, p := range []string{`(a)\1`, "a(?=b)", "a(?!b)", "(?<=a)b", `\m(a)`, `\s\M`, "[[:<:]] ",
		"(?b)a", "(?e)a", "***!x", "a(?i)b"} {
		_, err := CompileRegex(p, false)
		if errs.SQLState(err) != "0A000" {
			t.Errorf("pattern %q: got %v, want a 0A000 error", p, err)
		}
		if res := o.eval(t, "'abc' ~ '"+strings.ReplaceAll(p, "'", "''")+"'"); res.sqlstate != "" && res.sqlstate != "2201B" {
			t.Errorf("pattern %q: PostgreSQL fails with %s", p, res.sqlstate)
		}
	}
	// Invalid patterns fail in both, with 2201B.
	for _, p := range []string{"(", "[a", "a{2", "*"} {
		want := o.eval(t, "'abc' ~ '"+p+"'")
		got := ours(t, bin{"~", txt("abc"), txt(p)})
		if want.sqlstate != "2201B" || got.sqlstate != "2201B" {
			t.Errorf("pattern %q: got %v, PostgreSQL %v", p, got, want)
		}
	}
}
