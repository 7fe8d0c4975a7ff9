package ext

import (
	"regexp"
	"strconv"

	"github.com/rockstream/rockstream/internal/errs"
)

// CHECKPOINT TO uploads an online checkpoint of the store (docs/sql.md):
//
//	CHECKPOINT TO 'url' [KEEP n]
//
// Plain CHECKPOINT, PostgreSQL's statement, is not an extension.
var checkpointRe = regexp.MustCompile(`(?is)^\s*CHECKPOINT\s+TO\b`)

func parseCheckpoint(text string) Statement {
	if !checkpointRe.MatchString(text) {
		return Statement{}
	}
	st := Statement{Kind: Checkpoint}
	toks, err := lex(text)
	if err != nil {
		st.Err = err
		return st
	}
	p := &parser{toks: toks}
	p.next() // CHECKPOINT
	p.next() // TO
	t := p.next()
	if t.kind != tokString {
		st.Err = p.syntaxError(t)
		return st
	}
	if t.text == "" {
		st.Err = errs.New(errs.InvalidParameterValue, "CHECKPOINT TO needs a location: file:///path or s3://bucket/prefix")
		return st
	}
	st.Query = t.text
	if p.keyword("keep") {
		n := p.next()
		keep, err := strconv.Atoi(n.text)
		switch {
		case n.kind != tokNumber || err != nil:
			st.Err = p.syntaxError(n)
			return st
		case keep < 1:
			st.Err = errs.Newf(errs.InvalidParameterValue, "KEEP must be at least 1, not %d", keep)
			return st
		}
		st.Keep = keep
	}
	st.Err = p.end()
	return st
}
