package ext

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

var (
	subscribeRe = regexp.MustCompile(`(?is)^\s*SUBSCRIBE\b`)
	copyToRe    = regexp.MustCompile(`(?is)^\s*COPY\s*\((.*)\)\s*TO\s+STDOUT\b(.*?)\s*;?\s*$`)
	declareRe   = regexp.MustCompile(`(?is)^(\s*DECLARE\s.*?\bCURSOR\b.*?\bFOR)\s+(.*?)\s*;?\s*$`)
	fetchRe     = regexp.MustCompile(`(?is)^\s*((?:FETCH|MOVE)\b.*?)\s*\bWITH\s*\(\s*TIMEOUT\s*=?\s*'([^']*)'\s*\)\s*;?\s*$`)
)

// parseSubscribe recognizes
//
//	SUBSCRIBE [TO] name [WITH (option [, ...])] [AS OF EPOCH n] [;]
//
// (the two clauses in either order). SNAPSHOT defaults to true and
// PROGRESS to false.
func parseSubscribe(text string) Statement {
	if !subscribeRe.MatchString(text) {
		return Statement{}
	}
	st := Statement{Kind: Subscribe, Snapshot: true}
	toks, err := lex(text)
	if err != nil {
		st.Err = err
		return st
	}
	p := &parser{toks: toks[1:]}
	if p.peekKeyword("to") && len(p.toks) > 1 && p.toks[1].kind == tokIdent {
		p.next()
	}
	if p.peek().kind == tokPunct && p.peek().text == "(" {
		st.Err = errs.New(errs.FeatureNotSupported, "SUBSCRIBE to a query is not supported; create a materialized view of it and SUBSCRIBE to the view")
		return st
	}
	name := p.next()
	if name.kind != tokIdent {
		st.Err = p.syntaxError(name)
		return st
	}
	st.Name = identName(name.text)
	// WITH (...) and AS OF EPOCH n, each at most once, in either order.
	for seenWith := false; ; {
		switch {
		case !seenWith && p.peekKeyword("with"):
			p.next()
			seenWith = true
			if err := p.subscribeOptions(&st); err != nil {
				st.Err = err
				return st
			}
			continue
		case !st.HasEpoch && p.peekKeyword("as"):
			p.next()
			if !p.keyword("of") || !p.keyword("epoch") {
				st.Err = errs.New(errs.SyntaxError, "syntax error in SUBSCRIBE: expected AS OF EPOCH n")
				return st
			}
			n := p.next()
			epoch, err := strconv.ParseUint(n.text, 10, 64)
			if n.kind != tokNumber || err != nil {
				st.Err = errs.Newf(errs.SyntaxError, "syntax error in SUBSCRIBE: AS OF EPOCH takes an epoch number, not %q", n.text)
				return st
			}
			st.Epoch, st.HasEpoch = epoch, true
			continue
		}
		break
	}
	if p.peek().kind == tokPunct && p.peek().text == ";" {
		p.next()
	}
	if t := p.peek(); t.kind != tokEOF {
		st.Err = p.syntaxError(t)
	}
	return st
}

// subscribeOptions parses "(option [, ...])".
func (p *parser) subscribeOptions(st *Statement) error {
	if t := p.next(); t.text != "(" {
		return p.syntaxError(t)
	}
	seen := map[string]bool{}
	for {
		opt := p.next()
		name := strings.ToLower(opt.text)
		if opt.kind != tokIdent || (name != "snapshot" && name != "progress") {
			return errs.Newf(errs.SyntaxError, "SUBSCRIBE option %q is not recognized; the options are SNAPSHOT and PROGRESS", opt.text)
		}
		if seen[name] {
			return errs.New(errs.SyntaxError, "conflicting or redundant options")
		}
		seen[name] = true
		val := true
		if p.peek().text == "=" {
			p.next()
		}
		if t := p.peek(); t.kind == tokIdent || t.kind == tokNumber || t.kind == tokString {
			p.next()
			b, ok := parseBool(t.text)
			if !ok {
				return errs.Newf(errs.InvalidParameterValue, "%s requires a Boolean value", strings.ToUpper(name))
			}
			val = b
		}
		if name == "snapshot" {
			st.Snapshot = val
		} else {
			st.Progress = val
		}
		switch t := p.next(); t.text {
		case ",":
			continue
		case ")":
			return nil
		default:
			return p.syntaxError(t)
		}
	}
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "on", "1", "t", "yes":
		return true, true
	case "false", "off", "0", "f", "no":
		return false, true
	}
	return false, false
}

// parseCopyTo recognizes COPY (inner) TO STDOUT ... where inner is an
// extension statement; a COPY of a standard query is left to PostgreSQL's
// parser.
func parseCopyTo(text string) Statement {
	m := copyToRe.FindStringSubmatch(text)
	if m == nil {
		return Statement{}
	}
	inner := Parse(m[1])
	if inner.Kind != Subscribe && inner.Kind != AsOfEpoch {
		return Statement{}
	}
	return Statement{Kind: CopyTo, Inner: &inner, Query: m[2], Err: inner.Err}
}

// parseDeclare recognizes DECLARE ... CURSOR ... FOR inner where inner is
// an extension statement.
func parseDeclare(text string) Statement {
	m := declareRe.FindStringSubmatch(text)
	if m == nil {
		return Statement{}
	}
	inner := Parse(m[2])
	if inner.Kind != Subscribe && inner.Kind != AsOfEpoch {
		return Statement{}
	}
	return Statement{Kind: DeclareCursor, Inner: &inner, Query: strings.TrimSpace(m[1]), Err: inner.Err}
}

// parseFetch recognizes FETCH or MOVE with a WITH (TIMEOUT ...) clause,
// which PostgreSQL does not have.
func parseFetch(text string) Statement {
	m := fetchRe.FindStringSubmatch(text)
	if m == nil {
		return Statement{}
	}
	return Statement{Kind: Fetch, Query: m[1], Timeout: m[2]}
}

// A tiny lexer for SUBSCRIBE's own grammar.
type tokKind uint8

const (
	tokEOF tokKind = iota
	tokIdent
	tokNumber
	tokString
	tokPunct
)

type token struct {
	kind tokKind
	text string
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '"' || isIdentStart(c):
			// An identifier, possibly qualified: runs of name parts joined
			// by dots.
			j := i
			for {
				if j < len(s) && s[j] == '"' {
					k := j + 1
					for k < len(s) && (s[k] != '"' || (k+1 < len(s) && s[k+1] == '"')) {
						if s[k] == '"' {
							k++
						}
						k++
					}
					if k >= len(s) {
						return nil, errs.New(errs.SyntaxError, "unterminated quoted identifier")
					}
					j = k + 1
				} else {
					for j < len(s) && (isIdentStart(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '$') {
						j++
					}
				}
				if j < len(s) && s[j] == '.' && j+1 < len(s) && (s[j+1] == '"' || isIdentStart(s[j+1])) {
					j++
					continue
				}
				break
			}
			out = append(out, token{tokIdent, s[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			out = append(out, token{tokNumber, s[i:j]})
			i = j
		case c == '\'':
			// A string constant; a doubled quote stands for one quote.
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, errs.New(errs.SyntaxError, "unterminated quoted string")
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{tokString, b.String()})
			i = j + 1
		default:
			out = append(out, token{tokPunct, string(c)})
			i++
		}
	}
	return out, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

type parser struct {
	toks []token
}

func (p *parser) peek() token {
	if len(p.toks) == 0 {
		return token{kind: tokEOF}
	}
	return p.toks[0]
}

func (p *parser) next() token {
	t := p.peek()
	if len(p.toks) > 0 {
		p.toks = p.toks[1:]
	}
	return t
}

func (p *parser) peekKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) keyword(kw string) bool {
	if p.peekKeyword(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) syntaxError(t token) error {
	if t.kind == tokEOF {
		return errs.New(errs.SyntaxError, "syntax error at end of input")
	}
	return errs.Newf(errs.SyntaxError, "syntax error at or near %q", t.text)
}
