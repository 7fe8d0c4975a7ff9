// Package pgparse is PostgreSQL's parser (pg_query) behind a guard on
// how deeply a statement nests. pg_query's parse tree is recursive, and a
// statement such as SELECT 1+1+...+1 with tens of thousands of terms
// overflows the C stack while the tree is written out, which kills the
// whole process, or trips the protocol buffer decoder's recursion limit.
// PostgreSQL itself stops such statements with 54001 ("stack depth limit
// exceeded"); so does Parse, before the statement reaches the parser.
//
// Invariants:
//   - Parse never hands pg_query a statement whose estimated nesting is
//     above MaxDepth, or one longer than MaxBytes.
//   - The estimate never undercounts: it adds the parenthesis and bracket
//     depth to the operators chained at that depth since the last comma or
//     clause keyword (each nests the expression one level in the tree).
//     AND and OR reset it, as the parser flattens their chains.
package pgparse

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
)

// MaxDepth is the deepest nesting Parse accepts.
const MaxDepth = 1000

// Parse parses text with PostgreSQL's parser, or fails with 54001 when
// the statement nests deeper than MaxDepth, or with 53200 when parsing it
// would take the process past its memory limit (memgov.AdmitParse).
func Parse(text string) (*pg.ParseResult, error) {
	if err := memgov.Process().AdmitParse(int64(len(text))); err != nil {
		return nil, err
	}
	if err := Check(text); err != nil {
		return nil, err
	}
	return pg.Parse(text)
}

// MaxBytes is the longest text Parse accepts: PostgreSQL's largest
// message (1 GB less a byte), which no statement it runs can exceed.
const MaxBytes = 1<<30 - 1

// Check fails with 54000 when text is longer than MaxBytes, and with
// 54001 when it nests deeper than MaxDepth. Text too short to nest that
// deep is not scanned.
func Check(text string) error {
	if len(text) > MaxBytes {
		e := errs.New(errs.ProgramLimitExceeded, "statement is too long").(*errs.Error)
		e.Detail = fmt.Sprintf("The statement has %d bytes; at most %d are accepted.", len(text), MaxBytes)
		return e
	}
	// Every level of nesting takes at least one byte and its closing
	// counterpart, or an operator and an operand.
	if len(text) < 2*MaxDepth {
		return nil
	}
	d := Depth(text)
	if d <= MaxDepth {
		return nil
	}
	e := errs.Newf(errs.StatementTooComplex, "stack depth limit exceeded").(*errs.Error)
	e.Detail = fmt.Sprintf("The statement nests expressions about %d levels deep; RockStream parses at most %d.", d, MaxDepth)
	e.Hint = "Write long sums and chains as aggregates over rows, or split the expression."
	return e
}

// Depth estimates how deeply text's expressions nest (see the package
// doc). Text the lexer cannot read is reported as not nested: the parser
// then reports its error.
func Depth(text string) int {
	res, err := pg.Scan(text)
	if err != nil {
		return 0
	}
	chained := []int{0} // operators chained at each open level
	deepest := 0
	for _, t := range res.Tokens {
		top := len(chained) - 1
		switch t.Token {
		case pg.Token_ASCII_40, pg.Token_ASCII_91: // ( [
			chained = append(chained, 0)
		case pg.Token_ASCII_41, pg.Token_ASCII_93: // ) ]
			if top > 0 {
				chained = chained[:top]
			}
		case pg.Token_ASCII_44, pg.Token_ASCII_59: // , ;
			chained[top] = 0
		case pg.Token_ASCII_43, pg.Token_ASCII_45, pg.Token_ASCII_42, pg.Token_ASCII_47,
			pg.Token_ASCII_37, pg.Token_ASCII_94, pg.Token_ASCII_60, pg.Token_ASCII_62,
			pg.Token_ASCII_61, pg.Token_Op, pg.Token_TYPECAST, pg.Token_LESS_EQUALS,
			pg.Token_GREATER_EQUALS, pg.Token_NOT_EQUALS, pg.Token_NOT:
			chained[top]++
		default:
			if t.KeywordKind == pg.KeywordKind_RESERVED_KEYWORD {
				chained[top] = 0 // a clause, or AND/OR, starts
			}
		}
		if d := len(chained) - 1 + chained[len(chained)-1]; d > deepest {
			deepest = d
		}
	}
	return deepest
}
