package types

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/internal/errs"
)

// PostgreSQL's regular-expression match operators (~, ~*, !~, !~*) run
// on Go's regexp package (RE2). A pattern in PostgreSQL's advanced syntax
// (ARE) is translated into RE2 syntax with the same meaning; a pattern
// that uses a feature RE2 does not have is refused with 2201B rather than
// matched differently. docs/catalog.md lists the translation.
//
// The match operators only say whether a match exists, so the two
// engines' different rules for which match they report (greediness,
// leftmost-longest) cannot change a result.
//
// Translation:
//   - ARE matches "." and bracket negations against newlines and "^"/"$"
//     only at the ends of the string, as RE2 does with the s flag: every
//     translation starts with (?s).
//   - ~* and the embedded option (?i) ignore case; (?c) is the default.
//   - \A stays, \Z (end of string) becomes \z; \y and \Y (word boundary
//     and its negation) become \b and \B; \d \s \w \D \S \W, POSIX
//     classes in brackets ([[:alpha:]]), {m,n} bounds, non-greedy
//     quantifiers, (?:...) and escapes of punctuation mean the same.
//   - Refused: back references (\1..\9), lookahead and lookbehind
//     constraints ((?=, (?!, (?<=, (?<!), \m and \M (start and end of a
//     word), [[:<:]] and [[:>:]], the x, n, w, p, t, b, e and q embedded
//     options, and the ***= and ***: directors. "***=" (a literal
//     pattern) is translated, since it needs no regular-expression
//     syntax.

// regexCache keeps compiled patterns; ad-hoc catalog queries use a few
// constant patterns many times.
var regexCache = struct {
	sync.Mutex
	m map[regexKey]*regexp.Regexp
}{m: map[regexKey]*regexp.Regexp{}}

type regexKey struct {
	pattern string
	icase   bool
}

// maxCachedRegexes bounds regexCache; it is emptied when full.
const maxCachedRegexes = 1024

// CompileRegex compiles a PostgreSQL ARE pattern (case-insensitively when
// icase) into an equivalent Go regexp, or fails with 2201B.
func CompileRegex(pattern string, icase bool) (*regexp.Regexp, error) {
	k := regexKey{pattern, icase}
	regexCache.Lock()
	re := regexCache.m[k]
	regexCache.Unlock()
	if re != nil {
		return re, nil
	}
	src, err := TranslateRegex(pattern, icase)
	if err != nil {
		return nil, err
	}
	re, err = regexp.Compile(src)
	if err != nil {
		msg := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			msg = string(se.Code)
		}
		return nil, errs.Newf(errs.InvalidRegex, "invalid regular expression: %s", msg)
	}
	regexCache.Lock()
	if len(regexCache.m) >= maxCachedRegexes {
		clear(regexCache.m)
	}
	regexCache.m[k] = re
	regexCache.Unlock()
	return re, nil
}

func unsupportedRegex(what string) error {
	return errs.Newf(errs.InvalidRegex, "invalid regular expression: %s is not supported", what)
}

// TranslateRegex returns the RE2 pattern that matches what the ARE
// pattern matches (see the file comment), or a 2201B error.
func TranslateRegex(pattern string, icase bool) (string, error) {
	var b strings.Builder
	b.WriteString("(?s")
	p := pattern
	switch {
	case strings.HasPrefix(p, "***="):
		if icase {
			b.WriteString("i")
		}
		b.WriteString(")")
		b.WriteString(regexp.QuoteMeta(p[4:]))
		return b.String(), nil
	case strings.HasPrefix(p, "***:"):
		p = p[4:]
	case strings.HasPrefix(p, "***"):
		return "", unsupportedRegex("the director " + p[:min(len(p), 4)])
	}
	// Leading embedded options: (?i), (?c), ...
	for strings.HasPrefix(p, "(?") && len(p) > 2 && isOptionLetter(p[2]) {
		end := strings.IndexByte(p, ')')
		if end < 0 {
			return "", errs.New(errs.InvalidRegex, "invalid regular expression: invalid embedded option")
		}
		for _, c := range p[2:end] {
			switch c {
			case 'i':
				icase = true
			case 'c':
				icase = false
			default:
				return "", unsupportedRegex("the embedded option " + string(c))
			}
		}
		p = p[end+1:]
	}
	if icase {
		b.WriteString("i")
	}
	b.WriteString(")")
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return "", errs.New(errs.InvalidRegex, "invalid regular expression: invalid escape \\ sequence")
			}
			i++
			e := p[i]
			switch {
			case e >= '1' && e <= '9' && !inBracket:
				return "", unsupportedRegex("a back reference")
			case e == 'm' || e == 'M':
				return "", unsupportedRegex(`\` + string(e))
			case e == 'Z' && !inBracket:
				b.WriteString(`\z`)
			case e == 'y' && !inBracket:
				b.WriteString(`\b`)
			case e == 'Y' && !inBracket:
				b.WriteString(`\B`)
			case (e == 'w' || e == 'W' || e == 's' || e == 'S') && !inBracket:
				b.WriteString(unicodeEscape(e, false))
			case e == 'w' || e == 's':
				b.WriteString(unicodeEscape(e, true))
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case inBracket:
			if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					return "", errs.New(errs.InvalidRegex, "invalid regular expression: brackets [] not balanced")
				}
				class := p[i : i+end+2]
				if class == "[:<:]" || class == "[:>:]" {
					return "", unsupportedRegex(class)
				}
				if u, ok := unicodeClasses[class]; ok {
					class = u
				}
				b.WriteString(class)
				i += end + 1
				continue
			}
			if c == ']' {
				inBracket = false
			}
			b.WriteByte(c)
		case c == '[':
			if strings.HasPrefix(p[i:], "[[:<:]]") || strings.HasPrefix(p[i:], "[[:>:]]") {
				return "", unsupportedRegex(p[i : i+7])
			}
			inBracket = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			rest := p[i+2:]
			switch {
			case strings.HasPrefix(rest, ":"):
				b.WriteString("(?:")
				i += 2
			case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
				strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
				return "", unsupportedRegex("a lookahead or lookbehind constraint")
			default:
				return "", unsupportedRegex("an embedded option inside the pattern")
			}
		case c == '{' && i+1 < len(p) && isDigit(p[i+1]):
			end := strings.IndexByte(p[i:], '}')
			if end < 0 || !validBound(p[i+1:i+end]) {
				return "", errs.New(errs.InvalidRegex, "invalid regular expression: braces {} not balanced")
			}
			b.WriteString(p[i : i+end+1])
			i += end
		default:
			b.WriteByte(c)
		}
	}
	if inBracket {
		return "", errs.New(errs.InvalidRegex, "invalid regular expression: brackets [] not balanced")
	}
	return b.String(), nil
}

func isOptionLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// validBound reports whether s is the inside of a bound: m, m, or m,n.
func validBound(s string) bool {
	m, n, comma := strings.Cut(s, ",")
	return m != "" && strings.Trim(m, "0123456789") == "" && (!comma || strings.Trim(n, "0123456789") == "")
}

// PostgreSQL classifies characters with the database's locale (C.UTF-8
// here: Unicode letters are letters), where RE2's \w, \s and POSIX
// classes are ASCII. The translation uses Unicode categories instead.
var unicodeClasses = map[string]string{
	"[:alpha:]": `\p{L}`,
	"[:upper:]": `\p{Lu}`,
	"[:lower:]": `\p{Ll}`,
	"[:alnum:]": `\p{L}\p{Nd}`,
	"[:space:]": `\t\n\v\f\r \p{Zs}\x{2028}\x{2029}`,
}

// unicodeEscape translates \w, \W, \s and \S (inBracket: the inside of
// a bracket expression, for \w and \s only).
func unicodeEscape(e byte, inBracket bool) string {
	word, space := `\p{L}\p{Nd}_`, `\t\n\v\f\r \p{Zs}\x{2028}\x{2029}`
	switch {
	case inBracket && e == 'w':
		return word
	case inBracket:
		return space
	case e == 'w':
		return "[" + word + "]"
	case e == 'W':
		return "[^" + word + "]"
	case e == 's':
		return "[" + space + "]"
	}
	return "[^" + space + "]"
}

// regexMatch returns the evaluator of a match operator.
func regexMatch(icase, negate bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		re, err := CompileRegex(b.s, icase)
		if err != nil {
			return Null, err
		}
		return MakeBool(re.MatchString(a.s) != negate), nil
	}
}

func init() {
	for _, l := range []TypeID{Text, Name} {
		addBinary("~", l, Text, Bool, regexMatch(false, false))
		addBinary("~*", l, Text, Bool, regexMatch(true, false))
		addBinary("!~", l, Text, Bool, regexMatch(false, true))
		addBinary("!~*", l, Text, Bool, regexMatch(true, true))
	}
	// Catalog types compare as PostgreSQL's oid, name and "char"
	// operators do (names as text in the C collation).
	addComparisons(Oid, Oid, intCompareOps)
	generic := compareOps(Compare)
	addComparisons(Name, Name, generic)
	addComparisons(Name, Text, generic)
	addComparisons(Text, Name, generic)
	addComparisons(Char, Char, generic)
}
