package ext

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// OrReplaceMatView recognizes
//
//	CREATE OR REPLACE MATERIALIZED VIEW ...
//
// (PostgreSQL has no OR REPLACE for materialized views; RockStream adds
// it) and returns the statement with OR REPLACE replaced by blanks of the
// same length, so that PostgreSQL's parser reads the rest and error
// positions stay where they were, and true; any other text is returned
// as it is, with false. The words are recognized by tokens, never inside
// a string, a quoted identifier or a comment.
func OrReplaceMatView(text string) (string, bool) {
	if !containsFold(text, "replace") || !containsFold(text, "materialized") {
		return text, false
	}
	res, err := pg.Scan(text)
	if err != nil {
		return text, false
	}
	toks := res.Tokens[:0:0]
	for _, t := range res.Tokens {
		if t.Token != pg.Token_SQL_COMMENT && t.Token != pg.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	if len(toks) < 5 {
		return text, false
	}
	word := func(i int) string { return strings.ToLower(text[toks[i].Start:toks[i].End]) }
	if word(0) != "create" || word(1) != "or" || word(2) != "replace" || word(3) != "materialized" || word(4) != "view" {
		return text, false
	}
	start, end := toks[1].Start, toks[2].End
	return text[:start] + strings.Repeat(" ", int(end-start)) + text[end:], true
}
