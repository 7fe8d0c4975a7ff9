package types

import (
	"unicode/utf8"

	"github.com/rockstream/rockstream/internal/errs"
)

// LIKE and ILIKE, as PostgreSQL's like.c matches them: % matches any run
// of characters, _ exactly one character, and a backslash makes the next
// pattern character literal. A pattern ending in a backslash is an error,
// but only when matching reaches it. ESCAPE 'c' is like_escape(pattern,
// 'c'), which rewrites the pattern to use backslashes. ILIKE lower-cases
// both sides first (a UTF8 database does that), then matches as LIKE.

var errLikeEscapeAtEnd = errs.New(errs.InvalidEscapeSequence, "LIKE pattern must not end with escape character")

func init() {
	addBinary("~~", Text, Text, Bool, likeOp(false, false))
	addBinary("!~~", Text, Text, Bool, likeOp(false, true))
	addBinary("~~", Bytea, Bytea, Bool, likeOp(false, false))
	addBinary("!~~", Bytea, Bytea, Bool, likeOp(false, true))
	addBinary("~~*", Text, Text, Bool, likeOp(true, false))
	addBinary("!~~*", Text, Text, Bool, likeOp(true, true))
	addFunc("like_escape", Text, likeEscape(true), Text, Text)
	addFunc("like_escape", Bytea, likeEscape(false), Bytea, Bytea)
	addFunc("like", Bool, likeFunc(false, false), Text, Text)
	addFunc("like", Bool, likeFunc(false, false), Bytea, Bytea)
	addPhantom("like", []TypeID{phantomName, Text})
	addFunc("notlike", Bool, likeFunc(false, true), Text, Text)
	addFunc("notlike", Bool, likeFunc(false, true), Bytea, Bytea)
	addPhantom("notlike", []TypeID{phantomName, Text})
	addFunc("textlike", Bool, likeFunc(false, false), Text, Text)
	addFunc("textnlike", Bool, likeFunc(false, true), Text, Text)
	addFunc("texticlike", Bool, likeFunc(true, false), Text, Text)
	addFunc("texticnlike", Bool, likeFunc(true, true), Text, Text)
	addFunc("bytealike", Bool, likeFunc(false, false), Bytea, Bytea)
	addFunc("byteanlike", Bool, likeFunc(false, true), Bytea, Bytea)
}

func likeOp(fold, negate bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		s, p := a.s, b.s
		if fold {
			s, p = Lower(s), Lower(p)
		}
		m, err := Like(s, p, a.kind != Bytea)
		if err != nil {
			return Null, err
		}
		return MakeBool(m != negate), nil
	}
}

func likeFunc(fold, negate bool) func([]Value) (Value, error) {
	op := likeOp(fold, negate)
	return func(a []Value) (Value, error) { return op(a[0], a[1]) }
}

// likeResult is the outcome of matching a pattern suffix: the text
// matches, does not match here, or cannot match at any later start
// either (which lets % stop scanning).
type likeResult uint8

const (
	likeFalse likeResult = iota
	likeTrue
	likeAbort
)

// Like reports whether s matches the LIKE pattern p. chars says whether _
// matches a UTF-8 character (text) or a byte (bytea).
func Like(s, p string, chars bool) (bool, error) {
	r, err := likeMatch(s, p, chars)
	return r == likeTrue, err
}

// next returns the width of the character (or byte) at the start of s.
func likeNext(s string, chars bool) int {
	if !chars || s[0] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(s)
	return w
}

func likeMatch(t, p string, chars bool) (likeResult, error) {
	for len(t) > 0 && len(p) > 0 {
		switch p[0] {
		case '\\':
			// The next pattern byte is literal; there must be one.
			p = p[1:]
			if len(p) == 0 {
				return likeFalse, errLikeEscapeAtEnd
			}
			if p[0] != t[0] {
				return likeFalse, nil
			}
		case '%':
			// Skip the run of wildcards after %: each _ consumes one
			// character of the text now, and a further % changes nothing.
			p = p[1:]
			for len(p) > 0 && (p[0] == '%' || p[0] == '_') {
				if p[0] == '_' {
					if len(t) == 0 {
						return likeAbort, nil
					}
					t = t[likeNext(t, chars):]
				}
				p = p[1:]
			}
			if len(p) == 0 {
				return likeTrue, nil
			}
			// The rest of the pattern starts with a literal: try every
			// text position holding that byte.
			first := p[0]
			if first == '\\' {
				if len(p) < 2 {
					return likeFalse, errLikeEscapeAtEnd
				}
				first = p[1]
			}
			for len(t) > 0 {
				if t[0] == first {
					r, err := likeMatch(t, p, chars)
					if err != nil || r != likeFalse {
						return r, err
					}
				}
				t = t[likeNext(t, chars):]
			}
			return likeAbort, nil
		case '_':
			t = t[likeNext(t, chars):]
			p = p[1:]
			continue
		default:
			if p[0] != t[0] {
				return likeFalse, nil
			}
		}
		// A literal byte matched. Advancing by bytes is safe: a multibyte
		// character's first byte matched, so its other bytes are compared
		// one by one, and no ASCII byte occurs inside one.
		t, p = t[1:], p[1:]
	}
	if len(t) > 0 {
		return likeFalse, nil
	}
	for len(p) > 0 && p[0] == '%' {
		p = p[1:]
	}
	if len(p) == 0 {
		return likeTrue, nil
	}
	return likeAbort, nil
}

// likeEscape rewrites a pattern using escape character esc into one
// using backslashes: esc becomes a backslash and literal backslashes are
// doubled; an empty esc disables escaping.
func likeEscape(text bool) func([]Value) (Value, error) {
	return func(a []Value) (Value, error) {
		p, e := a[0].s, a[1].s
		out, err := LikeEscape(p, e, text)
		if err != nil {
			return Null, err
		}
		return Value{kind: a[0].kind, s: out}, nil
	}
}

// LikeEscape converts pattern p with escape string esc (empty or one
// character) into a pattern with backslash escapes.
func LikeEscape(p, esc string, chars bool) (string, error) {
	buf := make([]byte, 0, 2*len(p))
	if esc == "" {
		for i := 0; i < len(p); i++ {
			if p[i] == '\\' {
				buf = append(buf, '\\')
			}
			buf = append(buf, p[i])
		}
		return string(buf), nil
	}
	if w := likeNext(esc, chars); w != len(esc) {
		return "", errs.New(errs.InvalidEscapeSequence, "invalid escape string")
	}
	if esc == "\\" {
		return p, nil
	}
	after := false
	for len(p) > 0 {
		w := likeNext(p, chars)
		switch {
		case p[:w] == esc && !after:
			buf = append(buf, '\\')
			after = true
		case p[0] == '\\':
			buf = append(buf, '\\')
			if !after {
				buf = append(buf, '\\')
			}
			after = false
		default:
			buf = append(buf, p[:w]...)
			after = false
		}
		p = p[w:]
	}
	return string(buf), nil
}
