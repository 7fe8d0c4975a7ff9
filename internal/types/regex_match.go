package types

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// Which match a pattern reports. PostgreSQL's engine takes the leftmost
// match and, at that start, the longest one when the pattern is greedy
// (its first quantifier is greedy, or it has a top-level |) and the
// shortest when it is not; the parts matched by subexpressions then follow
// each subexpression's own greediness. RE2 reports either the leftmost-
// longest match or Perl's leftmost-first one. The functions that return
// matched text or positions (regexp_match, regexp_replace, ...; not ~ or
// regexp_like) therefore accept a pattern only where the two agree:
//
//   - without non-greedy quantifiers, PostgreSQL's match is the leftmost-
//     longest one, which RE2 reports in its longest mode;
//   - a non-greedy quantifier must be the pattern's only quantifier and it
//     must have no alternation of different lengths: then the shortest
//     match is the first one Perl's rules find;
//   - where subexpressions are reported (regexp_match, regexp_matches,
//     \1 in a replacement, a subexpr argument), the pattern must also not
//     combine an alternation of different lengths with another variable-
//     length part, nor repeat a subexpression of variable length, since
//     the engines split such matches differently.
//
// Everything else is refused with 0A000 naming the reason.

// pgRegex is a compiled pattern.
type pgRegex struct {
	// plain searches from the start of the text: longest or Perl
	// semantics as the pattern needs.
	plain *regexp.Regexp
	// searchers, compiled on first use, are from and at. from is
	// \A(?s:.)(?s:.*?)(R) in Perl mode: run on the text from the
	// character before a search position, its group 1 starts at the
	// leftmost match at or after that position, with the character before
	// as context for ^ and \b. at is \A(?s:.)(R) in longest mode: the
	// longest match starting right after the first character.
	searchers func() [2]*regexp.Regexp
	longest   bool
	groups    int
	// extentErr refuses reporting where a match starts and ends;
	// groupErr also reporting subexpressions.
	extentErr, groupErr error
	// limit says on which text the translation is not exact.
	limit textLimit
}

func newPgRegex(src string) (*pgRegex, error) {
	plain, err := compileRE2(src, false)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, errs.Newf(errs.InvalidRegex, "invalid regular expression: %s", err)
	}
	var a regexShape
	a.walk(tree)
	r := &pgRegex{longest: a.lazy == 0, groups: tree.MaxCap()}
	switch {
	case a.lazy > 0 && (a.lazy > 1 || a.greedy > 0 || a.varAlts > 0 || hasAlternation(src)):
		r.extentErr = unsupportedRegex("non-greedy quantifiers combined with other quantifiers or alternatives of different lengths, in a function that returns what matched")
		r.groupErr = r.extentErr
	case a.varAlts > 0 && a.varAlts+a.greedy+a.lazy > 1:
		r.groupErr = unsupportedRegex("alternatives of different lengths combined with other variable-length parts, in a function that returns subexpressions")
	case a.repeatedGroup:
		r.groupErr = unsupportedRegex("a repeated subexpression of variable length or with subexpressions inside, in a function that returns subexpressions")
	}
	r.plain = plain
	if r.longest {
		r.plain = plain.Copy()
		r.plain.Longest()
	}
	r.searchers = sync.OnceValue(func() [2]*regexp.Regexp {
		// These compile whenever src does.
		from := regexp.MustCompile(`\A(?s:.)(?s:.*?)(` + src + `)`)
		var at *regexp.Regexp
		if r.longest {
			at = regexp.MustCompile(`\A(?s:.)(` + src + `)`)
			at.Longest()
		}
		return [2]*regexp.Regexp{from, at}
	})
	return r, nil
}

// hasAlternation reports whether a translated pattern has a | outside
// brackets. RE2's parser turns a|b into [ab], but for PostgreSQL any
// alternation makes a pattern greedy.
func hasAlternation(src string) bool {
	inBracket := false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case inBracket:
			if c == ']' {
				inBracket = false
			}
		case c == '[':
			inBracket = true
			if i+1 < len(src) && src[i+1] == '^' {
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' {
				i++
			}
		case c == '|':
			return true
		}
	}
	return false
}

// regexShape counts what decides which match a pattern reports.
type regexShape struct {
	lazy, greedy int // variable quantifiers
	varAlts      int // alternations whose alternatives differ in length
	// repeatedGroup: a subexpression under a variable quantifier that
	// the engines may report differently.
	repeatedGroup bool
}

func (a *regexShape) walk(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if re.Op != syntax.OpRepeat || re.Min != re.Max {
			if re.Flags&syntax.NonGreedy != 0 {
				a.lazy++
			} else {
				a.greedy++
			}
			// PostgreSQL reports a repeated subexpression's last
			// iteration and forgets subexpressions nested in it that the
			// last iteration skipped; RE2 keeps their earlier text. Only
			// a repeated subexpression of fixed length with none nested
			// is reported alike.
			sub := re.Sub[0]
			if countCaptures(sub) > 0 && (sub.Op != syntax.OpCapture || countCaptures(sub.Sub[0]) > 0 || fixedLength(sub) < 0) {
				a.repeatedGroup = true
			}
		}
	case syntax.OpAlternate:
		if fixedLength(re) < 0 {
			a.varAlts++
		}
	}
	for _, s := range re.Sub {
		a.walk(s)
	}
}

func countCaptures(re *syntax.Regexp) int {
	n := 0
	if re.Op == syntax.OpCapture {
		n++
	}
	for _, s := range re.Sub {
		n += countCaptures(s)
	}
	return n
}

// fixedLength returns the number of characters every match of re has, or
// -1 when matches differ in length.
func fixedLength(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpCapture:
		return fixedLength(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min != re.Max {
			return -1
		}
		n := fixedLength(re.Sub[0])
		if n < 0 {
			return -1
		}
		return n * re.Min
	case syntax.OpConcat:
		total := 0
		for _, s := range re.Sub {
			n := fixedLength(s)
			if n < 0 {
				return -1
			}
			total += n
		}
		return total
	case syntax.OpAlternate:
		n := -2
		for _, s := range re.Sub {
			m := fixedLength(s)
			if m < 0 || (n != -2 && m != n) {
				return -1
			}
			n = m
		}
		return max(n, 0)
	}
	return -1
}

// checkText refuses text the translation is not exact on: RE2's \b
// takes a non-ASCII letter for a non-word character, PostgreSQL for a
// word character; RE2's [[:graph:]] and the like are ASCII.
func (r *pgRegex) checkText(s string) error {
	if r.limit == 0 {
		return nil
	}
	if r.limit&limitCaseFold != 0 {
		if c, bad := textFoldDiffers(s); bad {
			return unsupportedRegex(fmt.Sprintf("case-insensitive matching of text with %q (its case variants differ between the engines)", c))
		}
		if r.limit == limitCaseFold {
			return nil
		}
	}
	for i, c := range s {
		if s[i] < utf8.RuneSelf {
			continue
		}
		if r.limit&limitASCIIClass != 0 {
			return errs.New(errs.FeatureNotSupported, "regular expressions with [[:graph:]], [[:print:]], [[:punct:]], [[:cntrl:]] or [[:blank:]] are not supported on text that is not ASCII")
		}
		if unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.IsMark(c) {
			return errs.New(errs.FeatureNotSupported, "regular expressions with word boundaries (\\y, \\Y, \\m, \\M) are not supported on text with letters or digits that are not ASCII")
		}
	}
	return nil
}

// matches reports whether the pattern matches somewhere in s.
func (r *pgRegex) matches(s string) (bool, error) {
	if err := r.checkText(s); err != nil {
		return false, err
	}
	return r.plain.MatchString(s), nil
}

// find returns the byte offsets of the match PostgreSQL finds searching
// s from byte p (a character boundary): whole match then each group, -1
// for a group that took no part; nil when there is none.
func (r *pgRegex) find(s string, p int) []int {
	var m []int
	if p == 0 {
		m = r.plain.FindStringSubmatchIndex(s)
	} else {
		_, w := utf8.DecodeLastRuneInString(s[:p])
		prev := p - w
		search := r.searchers()
		loc := search[0].FindStringSubmatchIndex(s[prev:])
		if loc == nil {
			return nil
		}
		m = shift(loc[2:], prev)
		if r.longest {
			q := m[0]
			_, w := utf8.DecodeLastRuneInString(s[:q])
			prev = q - w
			loc = search[1].FindStringSubmatchIndex(s[prev:])
			m = shift(loc[2:], prev)
		}
	}
	return m
}

func shift(loc []int, by int) []int {
	out := make([]int, len(loc))
	for i, x := range loc {
		if x >= 0 {
			x += by
		}
		out[i] = x
	}
	return out
}

// findAll returns PostgreSQL's successive matches of the pattern in s from
// byte start (setup_regexp_matches): after a match the search goes on at
// its end, one character further for an empty match; with glob unset only
// the first. ignoreDegenerate drops empty matches at the end of the text
// or at the end of the previous match (and at the start), as splitting
// does.
func (r *pgRegex) findAll(s string, start int, glob, ignoreDegenerate bool) [][]int {
	var out [][]int
	prevEnd := 0
	for p := start; p <= len(s); {
		m := r.find(s, p)
		if m == nil {
			break
		}
		if !ignoreDegenerate || (m[0] < len(s) && m[1] > prevEnd) {
			out = append(out, m)
		}
		prevEnd = m[1]
		if !glob {
			break
		}
		p = m[1]
		if m[0] == m[1] {
			if p >= len(s) {
				break
			}
			_, w := utf8.DecodeRuneInString(s[p:])
			p += w
		}
	}
	return out
}
