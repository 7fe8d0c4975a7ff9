// Package split splits SQL scripts into statements as psql does, using
// PostgreSQL's lexer so that semicolons inside strings, quoted identifiers
// and comments do not split.
package split

import (
	"strings"
	"unicode"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Statement is one statement of a script.
type Statement struct {
	// Text is the statement, with its terminating semicolon (so that errors
	// at it are reported as PostgreSQL reports them), without leading --
	// comments and whitespace.
	Text string
	// Offset is the byte offset of Text in the script, so that positions
	// of errors can be reported relative to the whole script.
	Offset int
}

// Statements splits script into its statements. Text with no tokens other
// than comments is dropped. A script the lexer cannot read (an unterminated
// string) is returned whole, trimmed, so that running it reports the
// error.
func Statements(script string) []Statement {
	res, err := pg.Scan(script)
	if err != nil {
		trimmed := strings.TrimSpace(script)
		if trimmed == "" {
			return nil
		}
		return []Statement{{Text: trimmed, Offset: strings.Index(script, trimmed)}}
	}
	var out []Statement
	start, comment := -1, -1
	for _, t := range res.Tokens {
		switch t.Token {
		case pg.Token_SQL_COMMENT:
			continue
		case pg.Token_C_COMMENT:
			if start < 0 && comment < 0 {
				comment = int(t.Start)
			}
			continue
		case pg.Token_ASCII_59:
			if start >= 0 {
				out = append(out, Statement{Text: script[start:t.End], Offset: start})
			}
			start, comment = -1, -1
			continue
		}
		if start < 0 {
			start = int(t.Start)
			if comment >= 0 {
				start = comment
			}
		}
	}
	if start >= 0 {
		out = append(out, Statement{Text: strings.TrimRightFunc(script[start:], unicode.IsSpace), Offset: start})
	}
	return out
}
