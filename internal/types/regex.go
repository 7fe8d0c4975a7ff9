package types

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// PostgreSQL's regular expressions (ARE) run on Go's regexp package
// (RE2). A pattern is translated into RE2 syntax with the same meaning; a
// pattern that uses a feature RE2 does not have is refused with 0A000
// naming the feature rather than matched differently. docs/catalog.md
// lists the translation; regex_funcs.go adds the rules that make the
// match RE2 reports the one PostgreSQL reports.
//
// Translation:
//   - By default ARE matches "." and bracket negations against newlines
//     and "^"/"$" only at the ends of the string, as RE2 does with the s
//     flag. The newline-sensitive modes map to RE2's: n (and m) is RE2
//     without s and with m, where a bracket negation also excludes the
//     newline; p is without s; w is s and m.
//   - ~*, the i flag and the embedded option (?i) ignore case; c is the
//     default. RE2 matches a letter's case-folding orbit, PostgreSQL its
//     lower and upper case; the letters where these differ are refused in
//     a case-insensitive pattern or in the text it matches
//     (patternFoldDiffers, textFoldDiffers). [[:upper:]] and [[:lower:]]
//     are [[:alpha:]] then, as in PostgreSQL. x (expanded syntax) drops white space and # comments
//     outside brackets; q makes the whole pattern a literal, as "***="
//     does.
//   - \A stays, \Z (end of string) becomes \z; \y and \Y (word
//     boundary and its negation) become \b and \B, and \m, \M, [[:<:]]
//     and [[:>:]] (start and end of a word) become \b where the next
//     (previous) character of the pattern is a word character. RE2's \b
//     knows only ASCII word characters, so a pattern with one refuses to
//     match text with other letters or digits. \w \s \W \S and the
//     classes alpha, upper, lower, alnum, word and space become Unicode
//     classes; digit and xdigit are ASCII in both; graph, print, punct,
//     cntrl and blank stay RE2's ASCII ones and refuse other text.
//   - Character-entry escapes become the characters (\b is a backspace,
//     \B a backslash, \e, \cX, \u, \U, \x, \0); another escaped letter
//     or digit is invalid; escaped punctuation is itself. {m,n} bounds
//     (at most 255), non-greedy quantifiers and (?:...) mean the same.
//   - Refused: back references (\1..\9), lookahead and lookbehind
//     constraints ((?=, (?!, (?<=, (?<!), \m and \M elsewhere, collating
//     elements and equivalence classes ([[.x.]], [[=x=]]), the b and e
//     flags and embedded options (basic and extended syntax), options
//     inside the pattern, and directors other than ***= and ***:.

// regexOptions are the compile flags of a pattern: a function's flags
// argument, ~* and the pattern's leading embedded options.
type regexOptions struct {
	icase    bool
	nlStop   bool // "." and bracket negations do not match a newline
	nlAnchor bool // "^" and "$" also match at newlines
	expanded bool
	quote    bool
}

// parseRegexFlag applies one flag letter (of a function's flags
// argument or an embedded option); ok is false for a letter that is not
// a flag.
func (o *regexOptions) apply(c byte) (ok bool, err error) {
	switch c {
	case 'b', 'e':
		return true, unsupportedRegex(map[byte]string{'b': "the b flag (basic syntax)", 'e': "the e flag (extended syntax)"}[c])
	case 'c':
		o.icase = false
	case 'i':
		o.icase = true
	case 'm', 'n':
		o.nlStop, o.nlAnchor = true, true
	case 'p':
		o.nlStop, o.nlAnchor = true, false
	case 'q':
		o.quote = true
	case 's':
		o.nlStop, o.nlAnchor = false, false
	case 't':
		o.expanded = false
	case 'w':
		o.nlStop, o.nlAnchor = false, true
	case 'x':
		o.expanded = true
	default:
		return false, nil
	}
	return true, nil
}

// regexCache keeps compiled patterns; queries use a few constant patterns
// many times.
var regexCache = struct {
	sync.Mutex
	m map[regexKey]*pgRegex
}{m: map[regexKey]*pgRegex{}}

type regexKey struct {
	pattern string
	opts    regexOptions
}

// maxCachedRegexes bounds regexCache; it is emptied when full.
const maxCachedRegexes = 1024

// CompileRegex compiles a PostgreSQL ARE pattern (case-insensitively when
// icase) into an equivalent Go regexp, or fails with 2201B (a malformed
// pattern) or 0A000 (a feature RE2 does not have).
func CompileRegex(pattern string, icase bool) (*regexp.Regexp, error) {
	re, err := compileRegex(pattern, regexOptions{icase: icase})
	if err != nil {
		return nil, err
	}
	return re.plain, nil
}

// compileRegex returns the cached program of pattern under opts.
func compileRegex(pattern string, opts regexOptions) (*pgRegex, error) {
	k := regexKey{pattern, opts}
	regexCache.Lock()
	re := regexCache.m[k]
	regexCache.Unlock()
	if re != nil {
		return re, nil
	}
	src, limit, err := translateRegex(pattern, opts)
	if err != nil {
		return nil, err
	}
	re, err = newPgRegex(src)
	if err != nil {
		return nil, err
	}
	re.limit = limit
	regexCache.Lock()
	if len(regexCache.m) >= maxCachedRegexes {
		clear(regexCache.m)
	}
	regexCache.m[k] = re
	regexCache.Unlock()
	return re, nil
}

// compileRE2 compiles a translated pattern, with PostgreSQL's error for
// a malformed one.
func compileRE2(src string, longest bool) (*regexp.Regexp, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		msg := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			msg = string(se.Code)
			if m, ok := re2Messages[se.Code]; ok {
				msg = m
			}
		}
		return nil, errs.Newf(errs.InvalidRegex, "invalid regular expression: %s", msg)
	}
	if longest {
		re.Longest()
	}
	return re, nil
}

// re2Messages are PostgreSQL's messages for the malformed patterns RE2
// reports.
var re2Messages = map[syntax.ErrorCode]string{
	syntax.ErrMissingParen:          "parentheses () not balanced",
	syntax.ErrUnexpectedParen:       "parentheses () not balanced",
	syntax.ErrMissingBracket:        "brackets [] not balanced",
	syntax.ErrMissingRepeatArgument: "quantifier operand invalid",
	syntax.ErrInvalidRepeatOp:       "quantifier operand invalid",
	syntax.ErrInvalidRepeatSize:     "invalid repetition count(s)",
	syntax.ErrInvalidEscape:         "invalid escape \\ sequence",
	syntax.ErrTrailingBackslash:     "invalid escape \\ sequence",
	syntax.ErrInvalidCharRange:      "invalid character range",
	syntax.ErrInvalidCharClass:      "invalid character class",
}

func unsupportedRegex(what string) error {
	return errs.Newf(errs.FeatureNotSupported, "regular expressions with %s are not supported", what)
}

// TranslateRegex returns the RE2 pattern that matches what the ARE
// pattern matches (see the file comment), or an error.
func TranslateRegex(pattern string, icase bool) (string, error) {
	src, _, err := translateRegex(pattern, regexOptions{icase: icase})
	return src, err
}

// translateRegex translates pattern under opts; limit says on which text
// the translation is not exact.
func translateRegex(pattern string, opts regexOptions) (string, textLimit, error) {
	var b strings.Builder
	var limit textLimit
	p := pattern
	switch {
	case opts.quote:
		p = "***=" + p
	case strings.HasPrefix(p, "***:"):
		p = p[4:]
	case strings.HasPrefix(p, "***="):
	case strings.HasPrefix(p, "***"):
		return "", 0, unsupportedRegex("the director " + p[:min(len(p), 4)])
	}
	if !strings.HasPrefix(p, "***=") {
		// Leading embedded options: (?i), (?n), ...
		for strings.HasPrefix(p, "(?") && len(p) > 2 && isOptionLetter(p[2]) {
			end := strings.IndexByte(p, ')')
			if end < 0 {
				return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: invalid embedded option")
			}
			for i := 2; i < end; i++ {
				ok, err := opts.apply(p[i])
				if err != nil {
					return "", 0, err
				}
				if !ok {
					return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: invalid embedded option")
				}
			}
			p = p[end+1:]
			if opts.quote {
				p = "***=" + p
				break
			}
		}
	}
	if opts.icase {
		if r, bad := patternFoldDiffers(p); bad {
			return "", 0, unsupportedRegex(fmt.Sprintf("case-insensitive matching of %q (its case variants differ between the engines)", r))
		}
		limit |= limitCaseFold
	}
	flags := ""
	if !opts.nlStop {
		flags += "s"
	}
	if opts.nlAnchor {
		flags += "m"
	}
	if opts.icase {
		flags += "i"
	}
	if flags != "" {
		b.WriteString("(?" + flags + ")")
	}
	if lit, ok := strings.CutPrefix(p, "***="); ok {
		b.WriteString(regexp.QuoteMeta(lit))
		return b.String(), limit, nil
	}
	if opts.expanded {
		p = stripExpanded(p)
	}
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: invalid escape \\ sequence")
			}
			i++
			e := p[i]
			switch {
			case e >= '1' && e <= '9' && !inBracket:
				return "", 0, unsupportedRegex(`back references (\` + string(e) + `)`)
			case (e == 'm' || e == 'M') && !inBracket:
				if (e == 'm' && !wordCharAfter(p, i+1)) || (e == 'M' && !wordCharBefore(p[:i-1])) {
					return "", 0, unsupportedRegex(`\` + string(e) + " not next to a word character of the pattern")
				}
				b.WriteString(`\b`)
				limit |= limitWordBoundary
			case e == 'Z' && !inBracket:
				b.WriteString(`\z`)
			case e == 'A' && !inBracket:
				b.WriteString(`\A`)
			case e == 'y' && !inBracket:
				b.WriteString(`\b`)
				limit |= limitWordBoundary
			case e == 'Y' && !inBracket:
				b.WriteString(`\B`)
				limit |= limitWordBoundary
			case (e == 'w' || e == 'W' || e == 's' || e == 'S') && !inBracket:
				b.WriteString(unicodeEscape(e, false))
			case e == 'w' || e == 's':
				b.WriteString(unicodeEscape(e, true))
			case e == 'd' || e == 'D' || (e == 'S' || e == 'W') && inBracket:
				b.WriteByte('\\')
				b.WriteByte(e)
			case e != '_' && isASCIIWordByte(e):
				n, err := characterEscape(p, i, &b)
				if err != nil {
					return "", 0, err
				}
				i += n
			default:
				// An escaped character that is not a letter or digit
				// stands for itself.
				b.WriteString(regexp.QuoteMeta(string(e)))
			}
		case inBracket:
			if c == '[' && i+1 < len(p) && (p[i+1] == '.' || p[i+1] == '=') {
				return "", 0, unsupportedRegex("collating elements and equivalence classes ([[.x.]], [[=x=]])")
			}
			if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: brackets [] not balanced")
				}
				class := p[i : i+end+2]
				if !posixClasses[class] {
					return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: invalid character class")
				}
				if opts.icase && (class == "[:upper:]" || class == "[:lower:]") {
					class = "[:alpha:]"
				}
				if u, ok := unicodeClasses[class]; ok {
					class = u
				} else if class != "[:digit:]" && class != "[:xdigit:]" {
					limit |= limitASCIIClass // RE2's own class, ASCII only
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
			if w := p[i:]; strings.HasPrefix(w, "[[:<:]]") || strings.HasPrefix(w, "[[:>:]]") {
				if (w[3] == '<' && !wordCharAfter(p, i+7)) || (w[3] == '>' && !wordCharBefore(p[:i])) {
					return "", 0, unsupportedRegex(w[:7] + " not next to a word character of the pattern")
				}
				b.WriteString(`\b`)
				limit |= limitWordBoundary
				i += 6
				continue
			}
			inBracket = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
				if opts.nlStop {
					b.WriteString(`\n`)
				}
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
				return "", 0, unsupportedRegex("lookahead or lookbehind constraints")
			default:
				return "", 0, unsupportedRegex("embedded options inside the pattern")
			}
		case c == '{' && i+1 < len(p) && isDigit(p[i+1]):
			end := strings.IndexByte(p[i:], '}')
			if end < 0 || !validBound(p[i+1:i+end]) {
				return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: braces {} not balanced")
			}
			if boundTooLarge(p[i+1 : i+end]) {
				return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: invalid repetition count(s)")
			}
			b.WriteString(p[i : i+end+1])
			i += end
		default:
			b.WriteByte(c)
		}
	}
	if inBracket {
		return "", 0, errs.New(errs.InvalidRegex, "invalid regular expression: brackets [] not balanced")
	}
	return b.String(), limit, nil
}

// characterEscape translates the character-entry escape whose letter is
// at p[i] (after the backslash), returning how many more bytes it took:
// \a \b (backspace) \B (backslash) \cX \e \f \n \r \t \v \uwxyz
// \Ustuvwxyz \xhhh and \0 (NUL). Any other letter or digit is an invalid
// escape, as in PostgreSQL.
func characterEscape(p string, i int, b *strings.Builder) (int, error) {
	invalid := errs.New(errs.InvalidRegex, "invalid regular expression: invalid escape \\ sequence")
	hexRune := func(digits string) {
		fmt.Fprintf(b, `\x{%s}`, digits)
	}
	switch e := p[i]; e {
	case 'a', 'f', 'n', 'r', 't', 'v':
		b.WriteByte('\\')
		b.WriteByte(e)
	case 'b':
		b.WriteString(`\x08`)
	case 'B':
		b.WriteString(`\\`)
	case 'e':
		b.WriteString(`\x1b`)
	case '0':
		b.WriteString(`\x00`)
	case 'c':
		if i+1 >= len(p) {
			return 0, invalid
		}
		fmt.Fprintf(b, `\x{%x}`, p[i+1]&0x1f)
		return 1, nil
	case 'u', 'U':
		n := 4
		if e == 'U' {
			n = 8
		}
		if i+n >= len(p) || strings.Trim(p[i+1:i+1+n], "0123456789abcdefABCDEF") != "" {
			return 0, invalid
		}
		hexRune(p[i+1 : i+1+n])
		return n, nil
	case 'x':
		n := 0
		for i+1+n < len(p) && strings.IndexByte("0123456789abcdefABCDEF", p[i+1+n]) >= 0 {
			n++
		}
		if n == 0 {
			return 0, invalid
		}
		hexRune(p[i+1 : i+1+n])
		return n, nil
	default:
		return 0, invalid
	}
	return 0, nil
}

// isASCIIWordByte reports whether c is an ASCII word character.
func isASCIIWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// wordCharAfter reports whether the pattern at i starts with a literal
// word character or \w, so that a start-of-word constraint before it is
// a word boundary.
func wordCharAfter(p string, i int) bool {
	if i < len(p) && isASCIIWordByte(p[i]) {
		return true
	}
	return strings.HasPrefix(p[i:], `\w`) || strings.HasPrefix(p[i:], `\d`)
}

// wordCharBefore reports whether the pattern q ends with a literal word
// character, \w or \d, or one of those with +, so that an end-of-word
// constraint after it is a word boundary.
func wordCharBefore(q string) bool {
	q = strings.TrimSuffix(q, "+")
	if strings.HasSuffix(q, `\w`) || strings.HasSuffix(q, `\d`) {
		return true
	}
	return q != "" && isASCIIWordByte(q[len(q)-1]) && !escapedAt(q, len(q)-1)
}

// escapedAt reports whether the byte at j follows an odd number of
// backslashes.
func escapedAt(q string, j int) bool {
	n := 0
	for j--; j >= 0 && q[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// stripExpanded removes the white space and # comments of an expanded
// pattern, outside bracket expressions and unless escaped.
func stripExpanded(p string) string {
	var b strings.Builder
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case inBracket:
			if c == ']' {
				inBracket = false
			}
			b.WriteByte(c)
		case c == '[':
			inBracket = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isOptionLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// validBound reports whether s is the inside of a bound: m, m, or m,n.
func validBound(s string) bool {
	m, n, comma := strings.Cut(s, ",")
	return m != "" && strings.Trim(m, "0123456789") == "" && (!comma || strings.Trim(n, "0123456789") == "")
}

// maxRepeat is PostgreSQL's limit on a bound (DUPMAX).
const maxRepeat = 255

// boundTooLarge reports whether a valid bound has a count over maxRepeat.
func boundTooLarge(s string) bool {
	for _, part := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(part); part != "" && (err != nil || n > maxRepeat) {
			return true
		}
	}
	return false
}

// posixClasses are the class names PostgreSQL knows in brackets.
var posixClasses = map[string]bool{
	"[:alnum:]": true, "[:alpha:]": true, "[:blank:]": true, "[:cntrl:]": true, "[:digit:]": true, "[:graph:]": true,
	"[:lower:]": true, "[:print:]": true, "[:punct:]": true, "[:space:]": true, "[:upper:]": true, "[:xdigit:]": true,
	"[:word:]": true,
}

// spaceClass is the C library's white space in a UTF-8 locale: Unicode's
// space separators except the no-break ones, line and paragraph
// separators, and the ASCII controls.
const spaceClass = `\t\n\v\f\r \x{1680}\x{2000}-\x{2006}\x{2008}-\x{200A}\x{2028}\x{2029}\x{205F}\x{3000}`

// PostgreSQL classifies characters with the database's locale (C.UTF-8
// here: Unicode letters are letters), where RE2's \w, \s and POSIX
// classes are ASCII. The translation uses Unicode categories instead.
var unicodeClasses = map[string]string{
	"[:alpha:]": `\p{L}`,
	"[:upper:]": `\p{Lu}`,
	"[:lower:]": `\p{Ll}`,
	"[:alnum:]": `\p{L}\p{Nd}`,
	"[:space:]": spaceClass,
	"[:word:]":  `\p{L}\p{Nd}_`,
}

// textLimit marks translations that are exact only on some text.
type textLimit uint8

const (
	// limitWordBoundary: RE2's \b and \B know only ASCII word
	// characters.
	limitWordBoundary textLimit = 1 << iota
	// limitASCIIClass: [[:graph:]], [[:print:]], [[:punct:]],
	// [[:cntrl:]] and [[:blank:]] are RE2's ASCII classes; the C
	// library's classification of other characters has no RE2
	// equivalent.
	limitASCIIClass
	// limitCaseFold: case-insensitive; RE2 matches a letter's whole
	// Unicode case-folding orbit, PostgreSQL its lower and upper case
	// forms, which differ for a few letters (ſ, ς, ǅ, K, İ, ...).
	limitCaseFold
)

// Case-insensitive matching: RE2 lets a pattern letter p match every
// letter of its simple case-folding orbit; PostgreSQL matches p, its lower
// case and its upper case form. Where these sets differ, either the
// pattern letter is refused (when PostgreSQL matches a letter RE2 does
// not, or RE2 matches an extra ASCII letter, as for ſ matching s) or the
// text letter RE2 alone would match is (ẞ for ß, ſ for s, the Kelvin sign
// for k).

// foldOrbit returns r's simple case-folding orbit, r first.
func foldOrbit(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	return orbit
}

// caseVariant reports whether q is p or one of its case forms.
func caseVariant(p, q rune) bool {
	return q == p || q == unicode.ToLower(p) || q == unicode.ToUpper(p)
}

// patternFoldDiffers returns a letter of a case-insensitive pattern whose
// matches the engines cannot agree on whatever the text.
func patternFoldDiffers(s string) (rune, bool) {
	for _, p := range s {
		if p < utf8.RuneSelf {
			continue
		}
		orbit := foldOrbit(p)
		if !slices.Contains(orbit, unicode.ToLower(p)) || !slices.Contains(orbit, unicode.ToUpper(p)) {
			return p, true
		}
		for _, q := range orbit {
			if q < utf8.RuneSelf && !caseVariant(p, q) {
				return p, true
			}
		}
	}
	return 0, false
}

// textFoldDiffers returns a letter of s that RE2 matches, case-
// insensitively, for a pattern letter PostgreSQL does not match it for.
func textFoldDiffers(s string) (rune, bool) {
	for _, t := range s {
		if t < utf8.RuneSelf {
			continue
		}
		for _, p := range foldOrbit(t)[1:] {
			if !caseVariant(p, t) {
				return t, true
			}
		}
	}
	return 0, false
}

// unicodeEscape translates \w, \W, \s and \S (inBracket: the inside of
// a bracket expression, for \w and \s only).
func unicodeEscape(e byte, inBracket bool) string {
	word, space := `\p{L}\p{Nd}_`, spaceClass
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
		re, err := compileRegex(b.s, regexOptions{icase: icase})
		if err != nil {
			return Null, err
		}
		ok, err := re.matches(a.s)
		if err != nil {
			return Null, err
		}
		return MakeBool(ok != negate), nil
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
