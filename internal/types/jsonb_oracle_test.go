package types

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonbOracleValues are jsonb values of every shape: scalars of each kind
// at the top, empty and nested containers, duplicate-looking keys, numbers
// at several scales.
var jsonbOracleValues = []string{
	`null`, `true`, `1`, `1.50`, `"a"`, `""`, `[]`, `{}`, `[1, "a", null]`, `[[1, 2], {"a": 1}]`,
	`["a", "b", "a"]`, `{"a": 1, "b": [1, 2]}`, `{"a": {"a": null}, "bb": true}`, `{"b": 1.0, "a": "x"}`,
	`[1.0, 2, [3]]`, `{"aa": [], "a": {}}`,
}

// TestOracleJSONBOperators compares every jsonb operator and function of
// the types package with PostgreSQL over all values (and all pairs of
// values for the binary jsonb operators): results, NULLs, and errors with
// their SQLSTATEs and messages.
func TestOracleJSONBOperators(t *testing.T) {
	o := newOracle(t)
	jb := func(s string) ex { return l("jsonb", s) }
	arr := func(s string) ex { return l("text[]", s) }
	var cases []ex
	for _, a := range jsonbOracleValues {
		for _, b := range jsonbOracleValues {
			for _, op := range []string{"@>", "<@", "||", "=", "<", ">="} {
				cases = append(cases, bin{op, jb(a), jb(b)})
			}
		}
		x := jb(a)
		cases = append(cases,
			bin{"->", x, txt("a")}, bin{"->", x, i4(0)}, bin{"->", x, i4(-1)}, bin{"->", x, i4(2)},
			bin{"->>", x, txt("a")}, bin{"->>", x, i4(0)}, bin{"->>", x, i4(-3)},
			bin{"#>", x, arr("{a,0}")}, bin{"#>", x, arr("{1,a}")}, bin{"#>", x, arr("{}")}, bin{"#>>", x, arr("{b,1}")},
			bin{"#>>", x, arr("{0}")}, bin{"#>", x, arr("{a,NULL}")},
			bin{"?", x, txt("a")}, bin{"?|", x, arr("{a,b}")}, bin{"?&", x, arr("{a,b}")}, bin{"?&", x, arr("{}")},
			bin{"-", x, txt("a")}, bin{"-", x, i4(0)}, bin{"-", x, i4(-1)}, bin{"-", x, arr("{a,b}")},
			bin{"#-", x, arr("{a,0}")}, bin{"#-", x, arr("{0}")}, bin{"#-", x, arr("{-1}")}, bin{"#-", x, arr("{x}")},
			fn("jsonb_typeof", x), fn("jsonb_array_length", x), fn("jsonb_strip_nulls", x), fn("jsonb_pretty", x),
			fn("jsonb_exists", x, txt("a")),
			fn("jsonb_set", x, arr("{a}"), jb(`9`)), fn("jsonb_set", x, arr("{0}"), jb(`9`), l("boolean", "f")),
			fn("jsonb_set", x, arr("{-9}"), jb(`9`)), fn("jsonb_set", x, arr("{a,a}"), jb(`[9]`)),
			fn("jsonb_set", x, arr("{1,0}"), jb(`9`)), fn("jsonb_set", x, arr("{b,NULL}"), jb(`9`)),
			fn("jsonb_insert", x, arr("{0}"), jb(`"i"`)), fn("jsonb_insert", x, arr("{-1}"), jb(`"i"`), l("boolean", "t")),
			fn("jsonb_insert", x, arr("{a}"), jb(`1`)), fn("jsonb_insert", x, arr("{zz}"), jb(`1`), l("boolean", "t")),
		)
	}
	for _, e := range cases {
		o.check(t, e)
	}
}

// randomJSON returns the text of a random jsonb value of at most depth
// levels over a small alphabet of keys and scalars, so that containment,
// shared keys and equal elements are common.
func randomJSON(rng *rand.Rand, depth int) string {
	scalars := []string{`null`, `true`, `false`, `0`, `1`, `1.0`, `2`, `"a"`, `"b"`, `""`}
	keys := []string{`"a"`, `"b"`, `"c"`, `"aa"`}
	switch k := rng.IntN(4); {
	case depth == 0 || k < 2:
		return scalars[rng.IntN(len(scalars))]
	case k == 2:
		parts := make([]string, rng.IntN(4))
		for i := range parts {
			parts[i] = randomJSON(rng, depth-1)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	parts := make([]string, rng.IntN(4))
	for i := range parts {
		parts[i] = keys[rng.IntN(len(keys))] + ": " + randomJSON(rng, depth-1)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestOracleJSONBRandom compares containment, concatenation, deletion and
// the order of random jsonb pairs with PostgreSQL.
func TestOracleJSONBRandom(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(randomSeed, 13))
	jb := func(s string) ex { return l("jsonb", s) }
	for range 300 {
		a, b := jb(randomJSON(rng, 3)), jb(randomJSON(rng, 3))
		for _, op := range []string{"@>", "<@", "||", "<", "="} {
			o.check(t, bin{op, a, b})
		}
		o.check(t, bin{"-", a, txt("a")})
		o.check(t, bin{"#-", a, l("text[]", "{a,0}")})
		o.check(t, fn("jsonb_set", a, l("text[]", "{a,b}"), b))
		o.check(t, fn("jsonb_strip_nulls", a))
	}
}
