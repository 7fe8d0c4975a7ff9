package types

import (
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// PostgreSQL 15's regular-expression functions (regexp.c): regexp_like,
// regexp_match, regexp_matches (as the array of its rows' texts; the
// binder makes them rows), regexp_replace with flags and with start and N,
// regexp_split_to_array (and regexp_split_to_table, unnested by the
// binder), regexp_count, regexp_instr and regexp_substr. Positions and
// the start argument count characters, from 1. Which match is reported is
// regex_match.go's business.

func init() {
	T, I, B := Text, Int4, Bool
	addFunc("regexp_like", B, regexpLike, T, T)
	addFunc("regexp_like", B, regexpLike, T, T, T)
	addFunc("regexp_match", ArrayOf(T), regexpMatch, T, T)
	addFunc("regexp_match", ArrayOf(T), regexpMatch, T, T, T)
	addFunc(RegexpMatchesRows, ArrayOf(T), regexpMatchesRows, T, T)
	addFunc(RegexpMatchesRows, ArrayOf(T), regexpMatchesRows, T, T, T)
	addFunc("regexp_replace", T, regexpReplace, T, T, T)
	addFunc("regexp_replace", T, regexpReplace, T, T, T, T)
	addFunc("regexp_replace", T, regexpReplaceAt, T, T, T, I)
	addFunc("regexp_replace", T, regexpReplaceAt, T, T, T, I, I)
	addFunc("regexp_replace", T, regexpReplaceAt, T, T, T, I, I, T)
	addFunc("regexp_split_to_array", ArrayOf(T), regexpSplit("regexp_split_to_array()"), T, T)
	addFunc("regexp_split_to_array", ArrayOf(T), regexpSplit("regexp_split_to_array()"), T, T, T)
	addFunc(RegexpSplitRows, ArrayOf(T), regexpSplit("regexp_split_to_table()"), T, T)
	addFunc(RegexpSplitRows, ArrayOf(T), regexpSplit("regexp_split_to_table()"), T, T, T)
	addFunc("regexp_count", I, regexpCount, T, T)
	addFunc("regexp_count", I, regexpCount, T, T, I)
	addFunc("regexp_count", I, regexpCount, T, T, I, T)
	for n := 2; n <= 7; n++ {
		addFunc("regexp_instr", I, regexpInstr, []TypeID{T, T, I, I, I, T, I}[:n]...)
	}
	for n := 2; n <= 6; n++ {
		addFunc("regexp_substr", T, regexpSubstr, []TypeID{T, T, I, I, T, I}[:n]...)
	}
}

// RegexpMatchesRows and RegexpSplitRows are the catalog names of the
// arrays of the rows regexp_matches and regexp_split_to_table return;
// the binder unnests them. An element of RegexpMatchesRows is the text of
// one row's text[] (PostgreSQL has no arrays of arrays of varying length).
const (
	RegexpMatchesRows = "regexp_matches rows"
	RegexpSplitRows   = "regexp_split_to_table rows"
)

// regexFlags parses a function's flags argument as parse_re_flags does;
// fn names the function in the error when 'g' is given and not allowed.
func regexFlags(flags string, fn string, allowGlob bool) (regexOptions, bool, error) {
	var o regexOptions
	glob := false
	var unsupported error
	for i := 0; i < len(flags); i++ {
		c := flags[i]
		if c == 'g' {
			glob = true
			continue
		}
		ok, err := o.apply(c)
		if !ok {
			return o, false, errs.Newf(errs.InvalidParameterValue, "invalid regular expression option: %s", quoteInput(firstChar(flags, i)))
		}
		if err != nil && unsupported == nil {
			unsupported = err
		}
	}
	if glob && !allowGlob {
		e := errs.Newf(errs.InvalidParameterValue, "%s does not support the \"global\" option", fn).(*errs.Error)
		if fn == "regexp_match()" {
			e.Hint = "Use the regexp_matches function instead."
		}
		return o, false, e
	}
	return o, glob, unsupported
}

// regexArgs compiles the pattern of a call under its flags (args[flagsAt]
// when present).
func regexArgs(a []Value, flagsAt int, fn string, allowGlob bool) (*pgRegex, bool, error) {
	flags := ""
	if flagsAt < len(a) {
		flags = a[flagsAt].s
	}
	o, glob, err := regexFlags(flags, fn, allowGlob)
	if err != nil {
		return nil, false, err
	}
	re, err := compileRegex(a[1].s, o)
	if err != nil {
		return nil, false, err
	}
	if err := re.checkText(a[0].s); err != nil {
		return nil, false, err
	}
	return re, glob, nil
}

func invalidRegexParam(name string, v int64) error {
	return errs.Newf(errs.InvalidParameterValue, "invalid value for parameter %q: %d", name, v)
}

// charOffset returns the byte offset of the n-th character of s (from 0):
// len(s) just past its end, len(s)+1 further on (where no search finds
// anything).
func charOffset(s string, n int64) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	if n == 0 {
		return len(s)
	}
	return len(s) + 1
}

func charCount(s string) int { return utf8.RuneCountInString(s) }

func regexpLike(a []Value) (Value, error) {
	re, _, err := regexArgs(a, 2, "regexp_like()", false)
	if err != nil {
		return Null, err
	}
	return MakeBool(re.plain.MatchString(a[0].s)), nil
}

// matchArray is a match as regexp_match returns it: the subexpressions'
// texts (NULL where one took no part), or the whole match when the
// pattern has none.
func matchArray(s string, m []int, groups int) Value {
	if groups == 0 {
		return MakeArray(Text, []Value{MakeText(s[m[0]:m[1]])})
	}
	elems := make([]Value, groups)
	for g := 1; g <= groups; g++ {
		if m[2*g] >= 0 {
			elems[g-1] = MakeText(s[m[2*g]:m[2*g+1]])
		}
	}
	return MakeArray(Text, elems)
}

// reportErr returns the refusal for a pattern whose matches are reported
// with (groups) or without their subexpressions.
func (r *pgRegex) reportErr(groups bool) error {
	if groups && r.groups > 0 {
		return r.groupErr
	}
	return r.extentErr
}

func regexpMatch(a []Value) (Value, error) {
	re, _, err := regexArgs(a, 2, "regexp_match()", false)
	if err != nil {
		return Null, err
	}
	if err := re.reportErr(true); err != nil {
		return Null, err
	}
	m := re.find(a[0].s, 0)
	if m == nil {
		return Null, nil
	}
	return matchArray(a[0].s, m, re.groups), nil
}

func regexpMatchesRows(a []Value) (Value, error) {
	re, glob, err := regexArgs(a, 2, "regexp_matches()", true)
	if err != nil {
		return Null, err
	}
	if err := re.reportErr(true); err != nil {
		return Null, err
	}
	ms := re.findAll(a[0].s, 0, glob, false)
	rows := make([]Value, len(ms))
	for i, m := range ms {
		rows[i] = MakeText(Format(matchArray(a[0].s, m, re.groups), Of(ArrayOf(Text))))
	}
	return MakeArray(Text, rows), nil
}

func regexpSplit(fn string) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		re, _, err := regexArgs(a, 2, fn, false)
		if err != nil {
			return Null, err
		}
		if err := re.reportErr(false); err != nil {
			return Null, err
		}
		s := a[0].s
		var parts []Value
		prev := 0
		for _, m := range re.findAll(s, 0, true, true) {
			parts = append(parts, MakeText(s[prev:m[0]]))
			prev = m[1]
		}
		parts = append(parts, MakeText(s[prev:]))
		return MakeArray(Text, parts), nil
	}
}

func regexpReplace(a []Value) (Value, error) {
	re, glob, err := regexArgs(a, 3, "regexp_replace()", true)
	if err != nil {
		return Null, err
	}
	n := int64(1)
	if glob {
		n = 0
	}
	return replaceMatches(re, a[0].s, a[2].s, 0, n)
}

// regexpReplaceAt is regexp_replace(source, pattern, replacement, start
// [, N [, flags]]): N 0 replaces every match from start on, N > 0 only
// the N-th; without N, the g flag decides.
func regexpReplaceAt(a []Value) (Value, error) {
	start := a[3].n
	if start <= 0 {
		return Null, invalidRegexParam("start", start)
	}
	n := int64(-1)
	if len(a) > 4 {
		if n = a[4].n; n < 0 {
			return Null, invalidRegexParam("n", n)
		}
	}
	re, glob, err := regexArgs(a, 5, "regexp_replace()", true)
	if err != nil {
		return Null, err
	}
	if n < 0 {
		n = 1
		if glob {
			n = 0
		}
	}
	return replaceMatches(re, a[0].s, a[2].s, min(charOffset(a[0].s, start-1), len(a[0].s)+1), n)
}

// replaceMatches is replace_text_regexp.
func replaceMatches(re *pgRegex, s, repl string, from int, n int64) (Value, error) {
	groupRefs := hasGroupRef(repl)
	if err := re.reportErr(groupRefs); err != nil {
		return Null, err
	}
	var b strings.Builder
	pos := 0
	count := int64(0)
	for p := from; p <= len(s); {
		m := re.find(s, p)
		if m == nil {
			break
		}
		count++
		if n == 0 || count == n {
			b.WriteString(s[pos:m[0]])
			appendReplacement(&b, repl, s, m)
			pos = m[1]
			if n > 0 {
				break
			}
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
	b.WriteString(s[pos:])
	return MakeText(b.String()), nil
}

// hasGroupRef reports whether a replacement refers to a subexpression
// (\1 to \9).
func hasGroupRef(repl string) bool {
	for i := 0; i+1 < len(repl); i++ {
		if repl[i] == '\\' {
			if c := repl[i+1]; c >= '1' && c <= '9' {
				return true
			}
			i++
		}
	}
	return false
}

// appendReplacement writes a replacement: \1..\9 the subexpressions
// (nothing for one that took no part or does not exist), \& the whole
// match, \\ a backslash; any other backslash stays.
func appendReplacement(b *strings.Builder, repl, s string, m []int) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(repl) {
			b.WriteByte('\\')
			break
		}
		e := repl[i+1]
		g := -1
		switch {
		case e >= '1' && e <= '9':
			g = int(e - '0')
		case e == '&':
			g = 0
		case e == '\\':
			b.WriteByte('\\')
			i++
			continue
		default:
			b.WriteByte('\\')
			continue
		}
		i++
		if 2*g+1 < len(m) && m[2*g] >= 0 {
			b.WriteString(s[m[2*g]:m[2*g+1]])
		}
	}
}

// regexStart reads the start argument at i (1 when absent) as a byte
// offset.
func regexStart(a []Value, i int) (int, error) {
	if i >= len(a) {
		return 0, nil
	}
	if a[i].n <= 0 {
		return 0, invalidRegexParam("start", a[i].n)
	}
	return charOffset(a[0].s, a[i].n-1), nil
}

func regexpCount(a []Value) (Value, error) {
	start, err := regexStart(a, 2)
	if err != nil {
		return Null, err
	}
	re, _, err := regexArgs(a, 3, "regexp_count()", false)
	if err != nil {
		return Null, err
	}
	if err := re.reportErr(false); err != nil {
		return Null, err
	}
	return MakeInt(Int4, int64(len(re.findAll(a[0].s, start, true, false)))), nil
}

// nthMatch finds the N-th match from start and the bounds of its
// subexpression subexpr (0: the whole match), as regexp_instr and
// regexp_substr do; ok is false when there is none. PostgreSQL takes
// subexpr 1 of a pattern without subexpressions as the whole match.
func nthMatch(re *pgRegex, s string, start int, n, subexpr int64) (so, eo int, ok bool, err error) {
	if err := re.reportErr(subexpr > 0); err != nil {
		return 0, 0, false, err
	}
	ms := re.findAll(s, start, true, false)
	patterns := int64(1)
	if subexpr > 0 && re.groups > 0 {
		patterns = int64(re.groups)
	}
	if n > int64(len(ms)) || subexpr > patterns {
		return 0, 0, false, nil
	}
	m := ms[n-1]
	g := 0
	if subexpr > 0 && re.groups > 0 {
		g = int(subexpr)
	}
	if m[2*g] < 0 {
		return 0, 0, false, nil
	}
	return m[2*g], m[2*g+1], true, nil
}

func regexpInstr(a []Value) (Value, error) {
	var endOption int64
	so, eo, ok, err := nthRegexMatch(a, "regexp_instr()", 5, func() error {
		if len(a) > 4 {
			if endOption = a[4].n; endOption != 0 && endOption != 1 {
				return invalidRegexParam("endoption", endOption)
			}
		}
		return nil
	})
	if err != nil || !ok {
		return MakeInt(Int4, 0), err
	}
	at := so
	if endOption == 1 {
		at = eo
	}
	return MakeInt(Int4, int64(charCount(a[0].s[:at])+1)), nil
}

// nthRegexMatch finds what regexp_instr and regexp_substr look for: in
// the text a[0], the a[3]'th match (default 1) of pattern a[1] from
// character a[2], with the flags at a[flagsAt] and the subexpression at
// a[flagsAt+1] (default 0, the whole match), checked as PostgreSQL
// checks them for the function fn, in PostgreSQL's order; more (nil:
// none) checks the function's own arguments between n and the flags.
func nthRegexMatch(a []Value, fn string, flagsAt int, more func() error) (so, eo int, ok bool, err error) {
	start, err := regexStart(a, 2)
	if err != nil {
		return 0, 0, false, err
	}
	n, subexpr := int64(1), int64(0)
	if len(a) > 3 {
		if n = a[3].n; n <= 0 {
			return 0, 0, false, invalidRegexParam("n", n)
		}
	}
	if more != nil {
		if err := more(); err != nil {
			return 0, 0, false, err
		}
	}
	o, glob, err := regexFlags(optionalText(a, flagsAt), fn, true)
	if err == nil && len(a) > flagsAt+1 {
		if subexpr = a[flagsAt+1].n; subexpr < 0 {
			return 0, 0, false, invalidRegexParam("subexpr", subexpr)
		}
	}
	if err == nil && glob {
		err = errs.Newf(errs.InvalidParameterValue, `%s does not support the "global" option`, fn)
	}
	if err != nil {
		return 0, 0, false, err
	}
	re, err := compileRegex(a[1].s, o)
	if err == nil {
		err = re.checkText(a[0].s)
	}
	if err != nil {
		return 0, 0, false, err
	}
	return nthMatch(re, a[0].s, start, n, subexpr)
}

func optionalText(a []Value, i int) string {
	if i < len(a) {
		return a[i].s
	}
	return ""
}

func regexpSubstr(a []Value) (Value, error) {
	so, eo, ok, err := nthRegexMatch(a, "regexp_substr()", 4, nil)
	if err != nil || !ok {
		return Null, err
	}
	return MakeText(a[0].s[so:eo]), nil
}

// regexFlagsAt is the position of the flags argument of each
// regular-expression function with n arguments (-1: none).
func regexFlagsAt(name string, f *Function) int {
	n := len(f.Args)
	switch name {
	case "regexp_like", "regexp_match", RegexpMatchesRows, "regexp_split_to_array", RegexpSplitRows:
		return 2
	case "substring":
		if n == 2 && f.Args[0].ID == Text && f.Args[1].ID == Text {
			return 2 // none: past the arguments
		}
	case "regexp_replace":
		if n == 4 && f.Args[3].ID == Text {
			return 3
		}
		return 5
	case "regexp_count":
		return 3
	case "regexp_instr":
		return 5
	case "regexp_substr":
		return 4
	}
	return -1
}

// RegexCallRefusal returns the 0A000 error every evaluation of the
// resolved regular-expression function call f would raise, judged from
// its constant arguments (consts[i] is nil for an argument that is not a
// constant): a pattern RE2 cannot match exactly, or whose match the
// function would report differently. It returns nil when the call may
// succeed, so that a view refuses such a call when it is created rather
// than at every change.
func RegexCallRefusal(f *Function, consts []*Value) error {
	at := regexFlagsAt(f.Name, f)
	if at < 0 || len(consts) < 2 || consts[1] == nil || consts[1].IsNull() {
		return nil
	}
	flags := ""
	if at < len(consts) {
		if consts[at] == nil || consts[at].IsNull() {
			return nil
		}
		flags = consts[at].s
	}
	o, _, err := regexFlags(flags, f.Name, true)
	if err != nil {
		return onlyUnsupported(err)
	}
	re, err := compileRegex(consts[1].s, o)
	if err != nil {
		return onlyUnsupported(err)
	}
	constInt := func(i int) int64 {
		if i < len(consts) && consts[i] != nil && !consts[i].IsNull() {
			return consts[i].n
		}
		return 0
	}
	switch f.Name {
	case "regexp_like":
		return nil
	case "regexp_match", RegexpMatchesRows, "substring":
		return re.reportErr(true)
	case "regexp_replace":
		groups := len(consts) > 2 && consts[2] != nil && !consts[2].IsNull() && hasGroupRef(consts[2].s)
		return re.reportErr(groups)
	case "regexp_instr":
		return re.reportErr(constInt(6) > 0)
	case "regexp_substr":
		return re.reportErr(constInt(5) > 0)
	}
	return re.reportErr(false)
}

// RegexOperatorRefusal is RegexCallRefusal for the match operators (~,
// ~*, !~, !~*) with a constant pattern.
func RegexOperatorRefusal(op string, pattern Value) error {
	if pattern.IsNull() || pattern.kind != Text {
		return nil
	}
	_, err := compileRegex(pattern.s, regexOptions{icase: strings.HasSuffix(op, "*")})
	return onlyUnsupported(err)
}

func onlyUnsupported(err error) error {
	if errs.SQLState(err) == "0A000" {
		return err
	}
	return nil
}

// regexSubstring is substring(s FROM pattern): what the first
// subexpression matched, or the whole match when there is none; NULL
// without a match or when the subexpression took no part.
func regexSubstring(a []Value) (Value, error) {
	re, err := compileRegex(a[1].s, regexOptions{})
	if err == nil {
		err = re.checkText(a[0].s)
	}
	if err == nil {
		err = re.reportErr(true)
	}
	if err != nil {
		return Null, err
	}
	m := re.find(a[0].s, 0)
	g := 0
	if re.groups > 0 {
		g = 1
	}
	if m == nil || m[2*g] < 0 {
		return Null, nil
	}
	return MakeText(a[0].s[m[2*g]:m[2*g+1]]), nil
}
