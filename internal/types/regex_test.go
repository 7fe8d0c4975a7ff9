package types

import (
	"testing"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestTranslateRegex checks the ARE to RE2 translation of each construct
// (the oracle tests check the meaning against PostgreSQL).
func TestTranslateRegex(t *testing.T) {
	for _, c := range []struct {
		pattern string
		opts    regexOptions
		want    string
		limit   textLimit
	}{
		{"a.b", regexOptions{}, "(?s)a.b", 0},
		{"a.b", regexOptions{icase: true}, "(?si)a.b", limitCaseFold},
		{"(?i)a", regexOptions{}, "(?si)a", limitCaseFold},
		{"(?n)^a[^b]", regexOptions{}, `(?m)^a[^\nb]`, 0},
		{"^a", regexOptions{nlStop: true}, "^a", 0},
		{"^a", regexOptions{nlAnchor: true}, "(?sm)^a", 0},
		{"a b # c\n[ ]", regexOptions{expanded: true}, "(?s)ab[ ]", 0},
		{"a{2}.", regexOptions{quote: true}, `(?s)a\{2\}\.`, 0},
		{"***=a.", regexOptions{}, `(?s)a\.`, 0},
		{`\yab\Y`, regexOptions{}, `(?s)\bab\B`, limitWordBoundary},
		{`\mab\M`, regexOptions{}, `(?s)\bab\b`, limitWordBoundary},
		{`\w\Z`, regexOptions{}, `(?s)[\p{L}\p{Nd}_]\z`, 0},
		{`\b\B\e\x41\u00e9\cA\0`, regexOptions{}, `(?s)\x08\\\x1b\x{41}\x{00e9}\x{1}\x00`, 0},
		{`\.\_`, regexOptions{}, `(?s)\._`, 0},
		{"[[:graph:]]", regexOptions{}, "(?s)[[:graph:]]", limitASCIIClass},
		{"[[:alpha:]]", regexOptions{}, `(?s)[\p{L}]`, 0},
	} {
		got, limit, err := translateRegex(c.pattern, c.opts)
		if err != nil || got != c.want || limit != c.limit {
			t.Errorf("%q %+v: got %q (limit %d, %v), want %q (limit %d)", c.pattern, c.opts, got, limit, err, c.want, c.limit)
		}
	}
	for _, c := range []struct{ pattern, state string }{
		{`(a)\1`, "0A000"}, {"a(?=b)", "0A000"}, {`\m(`, "0A000"}, {"[[.a.]]", "0A000"}, {"(?b)a", "0A000"},
		{"a(?i)b", "0A000"}, {"(?i)ſ", "0A000"}, {`\k`, "2201B"}, {"[[:nope:]]", "2201B"}, {"a{256}", "2201B"},
		{"[a", "2201B"}, {"(?z)a", "2201B"},
	} {
		if _, _, err := translateRegex(c.pattern, regexOptions{}); errs.SQLState(err) != c.state {
			t.Errorf("%q: got %v, want SQLSTATE %s", c.pattern, err, c.state)
		}
	}
}

// TestRegexReportRules checks which patterns the functions that return
// what matched accept (regex_match.go).
func TestRegexReportRules(t *testing.T) {
	for _, c := range []struct {
		pattern        string
		extent, groups bool // accepted
	}{
		{"a+b*", true, true},
		{"(a+)(b*)", true, true},
		{"<.*?>", true, true},
		{"a(.*?)b", true, true},
		{"a.*?b+", false, false},
		{"(a|b).*?", false, false},
		{"(a|ab)(b?)", true, false},
		{`(\w+)@(gmail|yahoo)`, true, true},
		{"(ab)+", true, true},
		{"(a+)+", true, false},
		{"((a)|b)+", true, false},
		{"(a|ab)", true, true},
	} {
		re, err := compileRegex(c.pattern, regexOptions{})
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := re.reportErr(false) == nil; got != c.extent {
			t.Errorf("%q: extents accepted %v, want %v", c.pattern, got, c.extent)
		}
		if got := re.reportErr(true) == nil; got != c.groups {
			t.Errorf("%q: subexpressions accepted %v, want %v", c.pattern, got, c.groups)
		}
	}
}

// TestRegexFindFrom checks searches that start inside the text: the
// character before the start is context for ^ and word boundaries.
func TestRegexFindFrom(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		from       int
		want       []int
	}{
		{"^a", "aa", 1, nil},
		{`\yb`, "ab b", 1, []int{3, 4}},
		{"a+", "baaa", 1, []int{1, 4}},
		{"a*", "baaa", 2, []int{2, 4}},
		{"x", "abc", 3, nil},
	} {
		re, err := compileRegex(c.pattern, regexOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := re.find(c.s, c.from)
		if len(got) > 2 {
			got = got[:2]
		}
		if len(got) != len(c.want) || (len(got) == 2 && (got[0] != c.want[0] || got[1] != c.want[1])) {
			t.Errorf("%q in %q from %d: got %v, want %v", c.pattern, c.s, c.from, got, c.want)
		}
	}
}

// FuzzRegexFunctions checks that no pattern, flags or text makes the
// regular-expression functions panic: bad input is an error.
func FuzzRegexFunctions(f *testing.F) {
	for _, s := range []string{`(a|b)*?\1`, `[[:<:]]x\M`, `***=`, `(?x)a # b`, `\u12`, `[^]`, `a{2,1}`, `\y\Y\m`, `(?n)^$`} {
		f.Add(s, "gixn", "ab\nc ä")
	}
	f.Fuzz(func(t *testing.T, pattern, flags, text string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(text) || !utf8.ValidString(flags) {
			return
		}
		p, fl, s := MakeText(pattern), MakeText(flags), MakeText(text)
		one := MakeInt(Int4, 1)
		regexpMatch([]Value{s, p, fl})
		regexpMatchesRows([]Value{s, p, fl})
		regexpReplace([]Value{s, p, MakeText(`<\&\1>`), fl})
		regexpReplaceAt([]Value{s, p, MakeText("x"), MakeInt(Int4, 2), MakeInt(Int4, 0), fl})
		regexpSplit("regexp_split_to_array()")([]Value{s, p, fl})
		regexpCount([]Value{s, p, one, fl})
		regexpInstr([]Value{s, p, one, one, one, fl, one})
		regexpSubstr([]Value{s, p, MakeInt(Int4, 2), one, fl, one})
		regexSubstring([]Value{s, p})
		regexMatch(true, false)(s, p)
	})
}

// BenchmarkRegexFunctions measures the functions over a constant pattern
// (compiled once, then from the cache) on a 100-character text.
func BenchmarkRegexFunctions(b *testing.B) {
	s := MakeText("the quick brown fox jumps over the lazy dog 12345 times, then naps for 678 minutes in the sun; ok")
	for _, c := range []struct {
		name string
		f    func() (Value, error)
	}{
		{"match_operator", func() (Value, error) { return regexMatch(false, false)(s, MakeText(`\d+ min`)) }},
		{"regexp_match", func() (Value, error) { return regexpMatch([]Value{s, MakeText(`(\d+) (\w+)`)}) }},
		{"regexp_replace_g", func() (Value, error) {
			return regexpReplace([]Value{s, MakeText(`[aeiou]`), MakeText("_"), MakeText("g")})
		}},
		{"regexp_split", func() (Value, error) {
			return regexpSplit("regexp_split_to_array()")([]Value{s, MakeText(`\s+`)})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
