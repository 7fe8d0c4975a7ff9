package types

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// SQL regular expressions (SIMILAR TO), as PostgreSQL 15 runs them: the
// parser turns x SIMILAR TO p [ESCAPE e] into x ~ similar_to_escape(p
// [, e]), and similar_to_escape rewrites the SQL pattern into an ARE
// anchored at both ends (% is .*, _ is ., ( is a non-capturing group,
// the ARE metacharacters . ^ $ \ are escaped, the escape character makes
// the next character literal, bracket expressions pass through), which
// the regex engine (regex.go) then matches.
//
// substring(x SIMILAR p ESCAPE e) returns the part of x that matches the
// section of p between the two escape-double-quote separators, the whole
// of x having to match p. PostgreSQL does it by matching the rewritten
// pattern ^(?:p1){1,1}?(p2){1,1}(?:p3)$, whose {1,1}? makes p1 match as
// little text as it can and p2 then as much as it can. RE2 cannot report
// that split, so substring matches each section alone: the shortest
// prefix of x that p1 matches, with the longest following part that p2
// matches leaving a rest that p3 matches. Sections that only make sense
// together (a parenthesis opened in one and closed in another) and the
// word constraints (\m, \M, \y, \Y, which would see a section's ends as
// the text's ends) are refused with 0A000 there.

func init() {
	addFunc("similar_to_escape", Text, similarToEscape, Text)
	addFunc("similar_to_escape", Text, similarToEscape, Text, Text)
	addFunc("substring", Text, similarSubstring, Text, Text, Text)
}

// similarPattern is a SQL pattern rewritten to ARE sections: one without
// separators, two or three with.
type similarPattern struct {
	sections []string
	// constraint is set when the pattern uses an escaped letter that is
	// a word or text-boundary constraint in an ARE.
	constraint bool
}

// regex returns the ARE similar_to_escape returns.
func (p similarPattern) regex() string {
	var b strings.Builder
	b.WriteString("^(?:")
	for i, s := range p.sections {
		switch i {
		case 1:
			b.WriteString("){1,1}?(")
		case 2:
			b.WriteString("){1,1}(?:")
		}
		b.WriteString(s)
	}
	b.WriteString(")$")
	return b.String()
}

// translateSimilar rewrites a SQL pattern with escape string esc (one
// character, or empty for none) as PostgreSQL's similar_escape_internal.
func translateSimilar(pat, esc string) (similarPattern, error) {
	var e rune = -1
	if esc != "" {
		r, w := utf8.DecodeRuneInString(esc)
		if w != len(esc) {
			err := errs.New(errs.InvalidEscapeSequence, "invalid escape string").(*errs.Error)
			err.Hint = "Escape string must be empty or one character."
			return similarPattern{}, err
		}
		e = r
	}
	var out similarPattern
	var b strings.Builder
	afterEscape := false
	bracketDepth, classPos := 0, 0
	for _, c := range pat {
		switch {
		case afterEscape:
			if c == '"' && bracketDepth < 1 {
				if len(out.sections) == 2 {
					return similarPattern{}, errs.New(errs.InvalidEscapeCharUse,
						"SQL regular expression may not contain more than two escape-double-quote separators")
				}
				out.sections = append(out.sections, b.String())
				b.Reset()
			} else {
				b.WriteByte('\\')
				b.WriteRune(c)
				classPos = 3
				if strings.ContainsRune("mMyYAZ", c) {
					out.constraint = true
				}
			}
			afterEscape = false
		case c == e:
			afterEscape = true
		case bracketDepth > 0:
			if c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
			switch {
			case c == ']' && classPos > 2:
				bracketDepth--
			case c == '[':
				bracketDepth++
				classPos = 3
			case c == '^':
				classPos++
			default:
				classPos = 3
			}
		case c == '[':
			b.WriteRune(c)
			bracketDepth, classPos = 1, 1
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteByte('.')
		case c == '(':
			b.WriteString("(?:")
		case c == '\\' || c == '.' || c == '^' || c == '$':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	out.sections = append(out.sections, b.String())
	return out, nil
}

// similarToEscape is similar_to_escape(pattern [, escape]); the escape
// defaults to a backslash.
func similarToEscape(a []Value) (Value, error) {
	esc := `\`
	if len(a) > 1 {
		esc = a[1].s
	}
	p, err := translateSimilar(a[0].s, esc)
	if err != nil {
		return Null, err
	}
	return MakeText(p.regex()), nil
}

// maxSimilarWork bounds the characters substring's split search may
// match where it has to try the middle section on pairs of split points
// (quadratic in the text's length); past it the call fails with 54000.
const maxSimilarWork = 1 << 26

// similarSubstring is substring(x SIMILAR pattern ESCAPE escape).
func similarSubstring(a []Value) (Value, error) {
	s := a[0].s
	p, err := translateSimilar(a[1].s, a[2].s)
	if err != nil {
		return Null, err
	}
	whole, err := compileRegex(p.regex(), regexOptions{})
	if err != nil {
		return Null, err
	}
	ok, err := whole.matches(s)
	if err != nil || !ok {
		return Null, err
	}
	if len(p.sections) == 1 {
		return MakeText(s), nil
	}
	if p.constraint {
		return Null, unsupportedRegex("word or text-boundary constraints in substring with escape-double-quote separators")
	}
	if len(p.sections) == 2 {
		p.sections = append(p.sections, "")
	}
	parts := make([]*pgRegex, 3)
	for i, sec := range p.sections {
		if parts[i], err = compileRegex("^(?:"+sec+")$", regexOptions{}); err != nil {
			return Null, unsupportedRegex("a parenthesis or bracket spanning an escape-double-quote separator in substring")
		}
	}
	// bounds are the character boundaries of s.
	bounds := make([]int, 0, len(s)+1)
	for i := range s {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(s))
	rest := make([]bool, len(bounds))
	for k, j := range bounds {
		if rest[k], err = parts[2].matches(s[j:]); err != nil {
			return Null, err
		}
	}
	// longest finds, from a split point, the longest text the middle
	// section matches; shorter ones are tried only when what follows the
	// longest does not match the last section.
	src, _, err := translateRegex("^(?:"+p.sections[1]+")", regexOptions{})
	if err != nil {
		return Null, err
	}
	longest, err := regexp.Compile(src)
	if err != nil {
		return Null, unsupportedRegex("a parenthesis or bracket spanning an escape-double-quote separator in substring")
	}
	longest.Longest()
	work := 0
	for ki, i := range bounds {
		if ok, err := parts[0].matches(s[:i]); err != nil || !ok {
			if err != nil {
				return Null, err
			}
			continue
		}
		m := longest.FindStringIndex(s[i:])
		if m == nil {
			continue
		}
		if rest[ki+utf8.RuneCountInString(s[i:i+m[1]])] {
			return MakeText(s[i : i+m[1]]), nil
		}
		for kj := len(bounds) - 1; kj >= ki; kj-- {
			j := bounds[kj]
			if !rest[kj] || j-i > m[1] {
				continue
			}
			if work += j - i + 1; work > maxSimilarWork {
				return Null, errs.New(errs.ProgramLimitExceeded, "substring with escape-double-quote separators: the text is too long to split")
			}
			ok, err := parts[1].matches(s[i:j])
			if err != nil {
				return Null, err
			}
			if ok {
				return MakeText(s[i:j]), nil
			}
		}
	}
	return Null, nil
}
