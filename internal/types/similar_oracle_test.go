package types

import "testing"

var similarSubjects = []string{"", "abc", "aaa", "foobar", "a%b", "a_b", "x\ny", "héllo", "a.b", "a[b]c", `a\b`, "(x)"}

var similarPatterns = []string{"", "abc", "a%", "%b%", "_b_", "a_", "%", "_", "(a|b)%", "a*", "a+b?c", "[a-c]%",
	"[^a]%", "%[]]%", "a{2}%", "a.b", "a^b", "a$b", `a\b`, `a\%b`, `a\_b`, "(x)", "x|y", "%#\"o_b#\"%", "#\"o_b#\"%",
	"f#\"%#\"r", "#\"%#\"", "%#\"a#\"", "a#\"%", "#\"(a|b)*#\"%", "%#\"[a-c]+#\"%", "foo#\"b|bar#\"", `[\]]%`, "a#%",
	"%[[:alpha:]]%", "a(b|c)%", "(", "a#\"b#\"c#\"d", "%\\d%", "[a#]]%", "h_llo", "%#\"l*#\"o"}

func TestOracleSimilar(t *testing.T) {
	var cases []ex
	for _, p := range similarPatterns {
		cases = append(cases, fn("similar_to_escape", txt(p)), fn("similar_to_escape", txt(p), txt("#")),
			fn("similar_to_escape", txt(p), txt("")))
		for _, s := range similarSubjects {
			cases = append(cases, bin{"~", txt(s), fn("similar_to_escape", txt(p))},
				bin{"~", txt(s), fn("similar_to_escape", txt(p), txt("#"))},
				bin{"!~", txt(s), fn("similar_to_escape", txt(p), txt(""))},
				pgfn("substring", txt(s), txt(p), txt("#")))
		}
	}
	cases = append(cases, fn("similar_to_escape", n("text")), fn("similar_to_escape", txt("a"), n("text")),
		fn("similar_to_escape", txt("a"), txt("ab")), fn("similar_to_escape", txt("a"), txt("é")),
		fn("similar_to_escape", txt("aéb"), txt("é")), fn("similar_to_escape", u("a%")),
		pgfn("substring", n("text"), txt("a"), txt("#")), pgfn("substring", txt("a"), n("text"), txt("#")),
		pgfn("substring", txt("a"), txt("a"), n("text")), pgfn("substring", txt("a"), txt("a"), txt("##")),
		pgfn("substring", txt("foobar"), txt("%#\"o_b#\"%"), u("#")), pgfn("substring", u("foobar"), u("%#\"o%#\"%"), u("#")),
		pgfn("substring", txt("aaa"), txt("a#\"a*#\"a*"), txt("#")), pgfn("substring", txt("abab"), txt("%#\"ab#\"%"), txt("#")),
		pgfn("substring", txt("abab"), txt("%#\"(ab)*#\"%"), txt("#")), pgfn("substring", txt("xyz"), txt("x#\"%"), txt("#")))
	refused := checkRefusable(t, cases)
	t.Logf("%d of %d cases refused", refused, len(cases))
	if refused > len(cases)/20 {
		t.Errorf("%d of %d cases refused", refused, len(cases))
	}
}
