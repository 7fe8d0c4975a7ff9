package types

import (
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// format(formatstr, args...) as PostgreSQL 15's text_format, and the
// quoting functions it uses: quote_literal, quote_nullable and
// QuoteIdent (quote_ident itself is bound among the system functions).
//
// A format specifier is %[position$][flags][width]type: position n$ takes
// the n-th argument after the format string, without one the argument
// after the last one used; the flag - pads on the right; the width is
// digits, * (the next argument) or *n$ (the n-th), a negative width
// meaning left alignment; type is s (the value as text, NULL as
// nothing), I (quote_ident; NULL is an error) or L (quote_literal, NULL
// as NULL). %% is a percent sign.

func init() {
	addFunc("quote_literal", Text, func(a []Value) (Value, error) { return MakeText(QuoteLiteral(a[0].s)), nil }, Text)
	d := addFunc("quote_nullable", Text, func(a []Value) (Value, error) {
		if a[0].IsNull() {
			return MakeText("NULL"), nil
		}
		return MakeText(QuoteLiteral(a[0].s)), nil
	}, Text)
	d.nonStrict = true
}

// QuoteLiteral is quote_literal: s between single quotes, quotes and
// backslashes doubled, with an E prefix when s has a backslash.
func QuoteLiteral(s string) string {
	var b strings.Builder
	if strings.Contains(s, `\`) {
		b.WriteByte('E')
	}
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte(s[i])
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// formatErr is format's error for a malformed specifier.
func formatErr(msg string) error {
	return errs.New(errs.InvalidParameterValue, msg)
}

func unterminatedFormat() error {
	e := errs.New(errs.InvalidParameterValue, "unterminated format() type specifier").(*errs.Error)
	e.Hint = `For a single "%" use "%%".`
	return e
}

// QuoteIdent is quote_ident: s as written in SQL, double-quoted unless it
// is a lower-case identifier that is not a keyword other than an
// unreserved one.
func QuoteIdent(s string) string {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		ch := s[i]
		safe = ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_'
	}
	if safe && !quotedKeywords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quotedKeywords are PostgreSQL 15's keywords that quote_ident quotes
// (every category but unreserved).
var quotedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization
		between bigint binary bit boolean both case cast char character check coalesce collate collation
		column concurrently constraint create cross current_catalog current_date current_role current_schema
		current_time current_timestamp current_user dec decimal default deferrable desc distinct do else end
		except exists extract false fetch float for foreign freeze from full grant greatest group grouping
		having ilike in initially inner inout int integer intersect interval into is isnull join lateral
		leading least left like limit localtime localtimestamp national natural nchar none normalize not
		notnull null nullif numeric offset on only or order out outer overlaps overlay placing position
		precision primary real references returning right row select session_user setof similar smallint
		some substring symmetric system_user table tablesample then time timestamp to trailing treat trim
		true union unique user using values varchar variadic verbose when where window with xmlattributes
		xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		m[k] = true
	}
	return m
}()

// maxFormatLength bounds format's result, as PostgreSQL's allocation
// limit bounds a text value.
const maxFormatLength = 1<<30 - 1

// TextFormat returns the evaluator of format over arguments of the given
// types (the format string first, as text). It must see NULL arguments.
func TextFormat(argTypes []Type) func([]Value) (Value, error) {
	return TextFormatZone(argTypes, UTCZone)
}

// TextFormatZone is TextFormat in the session time zone z.
func TextFormatZone(argTypes []Type, z Zone) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		if a[0].IsNull() {
			return Null, nil
		}
		return textFormat(a, argTypes, z)
	}
}

func textFormat(a []Value, argTypes []Type, z Zone) (Value, error) {
	f := a[0].s
	var b strings.Builder
	next := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return Null, unterminatedFormat()
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		spec, j, err := parseFormatSpec(f, i)
		if err != nil {
			return Null, err
		}
		i = j
		c, w := utf8.DecodeRuneInString(f[i:])
		if c != 's' && c != 'I' && c != 'L' {
			e := errs.Newf(errs.InvalidParameterValue, "unrecognized format() type specifier \"%s\"", f[i:i+w]).(*errs.Error)
			e.Hint = `For a single "%" use "%%".`
			return Null, e
		}
		width := spec.width
		if spec.widthPos >= 0 {
			arg := next
			if spec.widthPos > 0 {
				arg = spec.widthPos
			}
			next = arg + 1
			if arg >= len(a) {
				return Null, formatErr("too few arguments for format()")
			}
			if width, err = formatWidth(a[arg], argTypes[arg]); err != nil {
				return Null, err
			}
		}
		arg := next
		if spec.argPos > 0 {
			arg = spec.argPos
		}
		next = arg + 1
		if arg >= len(a) {
			return Null, formatErr("too few arguments for format()")
		}
		v := a[arg]
		var s string
		switch {
		case v.IsNull() && c == 's':
		case v.IsNull() && c == 'L':
			s = "NULL"
		case v.IsNull():
			return Null, errs.New(errs.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
		default:
			s = FormatZone(v, argTypes[arg], z)
			if c == 'I' {
				s = QuoteIdent(s)
			} else if c == 'L' {
				s = QuoteLiteral(s)
			}
		}
		if err := appendFormatPadded(&b, s, spec.minus, width); err != nil {
			return Null, err
		}
	}
	return MakeText(b.String()), nil
}

// formatSpec is a parsed specifier: argPos and widthPos are -1 when
// absent, widthPos 0 for a bare *.
type formatSpec struct {
	argPos, widthPos, width int
	minus                   bool
}

// parseFormatSpec parses the specifier after the % at f[i-1], returning
// it and the index of its type character.
func parseFormatSpec(f string, i int) (formatSpec, int, error) {
	s := formatSpec{argPos: -1, widthPos: -1}
	advance := func() error {
		i++
		if i >= len(f) {
			return unterminatedFormat()
		}
		return nil
	}
	digits := func() (int, bool, error) {
		n, found := 0, false
		for f[i] >= '0' && f[i] <= '9' {
			d := int(f[i] - '0')
			if n > (1<<31-1-d)/10 {
				return 0, false, errs.New(errs.NumericOutOfRange, "number is out of range")
			}
			n = n*10 + d
			found = true
			if err := advance(); err != nil {
				return 0, false, err
			}
		}
		return n, found, nil
	}
	n, found, err := digits()
	if err != nil {
		return s, i, err
	}
	if found {
		if f[i] != '$' {
			s.width = n
			return s, i, nil
		}
		s.argPos = n
		if n == 0 {
			return s, i, formatErr("format specifies argument 0, but arguments are numbered from 1")
		}
		if err := advance(); err != nil {
			return s, i, err
		}
	}
	for f[i] == '-' {
		s.minus = true
		if err := advance(); err != nil {
			return s, i, err
		}
	}
	if f[i] == '*' {
		if err := advance(); err != nil {
			return s, i, err
		}
		n, found, err := digits()
		if err != nil {
			return s, i, err
		}
		if found {
			if f[i] != '$' {
				return s, i, formatErr(`width argument position must be ended by "$"`)
			}
			s.widthPos = n
			if n == 0 {
				return s, i, formatErr("format specifies argument 0, but arguments are numbered from 1")
			}
			if err := advance(); err != nil {
				return s, i, err
			}
		} else {
			s.widthPos = 0
		}
	} else {
		n, _, err := digits()
		if err != nil {
			return s, i, err
		}
		s.width = n
	}
	return s, i, nil
}

// formatWidth reads a width argument: NULL is 0, integers as they are,
// other values through their text as an int4.
func formatWidth(v Value, t Type) (int, error) {
	if v.IsNull() {
		return 0, nil
	}
	if t.ID == Int4 || t.ID == Int2 {
		return int(v.Int()), nil
	}
	w, err := Parse(Of(Int4), Format(v, t))
	if err != nil {
		return 0, err
	}
	return int(w.Int()), nil
}

// appendFormatPadded appends s padded with spaces to width characters, on the
// right when minus is set or the width is negative.
func appendFormatPadded(b *strings.Builder, s string, minus bool, width int) error {
	if width == 0 {
		b.WriteString(s)
		return nil
	}
	left := minus
	if width < 0 {
		if width <= -1<<31 {
			return errs.New(errs.ProgramLimitExceeded, "number is out of range")
		}
		left, width = true, -width
	}
	pad := width - utf8.RuneCountInString(s)
	if b.Len()+len(s)+pad > maxFormatLength {
		return errs.New(errs.ProgramLimitExceeded, "requested length too large")
	}
	if !left && pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	b.WriteString(s)
	if left && pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	return nil
}
