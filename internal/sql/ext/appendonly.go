package ext

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// AppendOnly recognizes the APPEND ONLY clause of
//
//	CREATE TABLE name (columns) APPEND ONLY [WITH (...)]
//
// and returns the statement with the clause replaced by blanks of the
// same length (so that PostgreSQL's parser reads the rest, and error
// positions stay where they were) and true; any other text is returned
// as it is, with false. The clause is recognized by tokens, never inside
// a string, a quoted identifier or a comment.
func AppendOnly(text string) (string, bool) {
	if !containsFold(text, "append") || !containsFold(text, "only") {
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
	word := func(i int) string {
		if i >= len(toks) {
			return ""
		}
		return strings.ToLower(text[toks[i].Start:toks[i].End])
	}
	i := 0
	if word(i) != "create" {
		return text, false
	}
	for i++; word(i) != "table"; i++ {
		switch word(i) {
		case "global", "local", "temp", "temporary", "unlogged":
		default:
			return text, false
		}
	}
	// Skip to the column list and past its closing parenthesis.
	for i < len(toks) && toks[i].Token != pg.Token_ASCII_40 {
		i++
	}
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].Token {
		case pg.Token_ASCII_40:
			depth++
		case pg.Token_ASCII_41:
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if i+2 >= len(toks) || word(i+1) != "append" || toks[i+1].Token != pg.Token_IDENT || word(i+2) != "only" {
		return text, false
	}
	start, end := toks[i+1].Start, toks[i+2].End
	return text[:start] + strings.Repeat(" ", int(end-start)) + text[end:], true
}
