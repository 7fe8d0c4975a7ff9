package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
)

// Error messages are printed as psql prints a server error with its default
// verbosity:
//
//	ERROR:  relation "nope" does not exist
//	LINE 1: SELECT * FROM nope;
//	                      ^
//
// The LINE context appears when the error carries a position in the
// statement text.

// Limits of the LINE context, as in libpq: the excerpt is at most
// errContextWidth columns, and is cut on the right only if that leaves at
// least errMinRightCut columns after the error position.
const (
	errContextWidth = 60
	errMinRightCut  = 10
)

// writeError prints err, raised by the statement text stmt (or the -c
// string of several statements), to w. Session.Exec reports positions
// counted from the start of the text it was given.
func writeError(w io.Writer, err error, stmt string) {
	var b strings.Builder
	b.WriteString("ERROR:  ")
	b.WriteString(err.Error())
	b.WriteByte('\n')
	var e *errs.Error
	if errors.As(err, &e) && e.Position > 0 {
		b.WriteString(errorContext(stmt, e.Position))
	}
	_, _ = io.WriteString(w, b.String())
}

// errorContext returns the "LINE n: ..." excerpt of query around the
// 1-based character position pos and the line with the caret under it, or
// "" when pos lies outside query.
func errorContext(query string, pos int) string {
	loc := pos - 1
	if loc < 0 {
		return ""
	}
	// Characters of query with tabs replaced by spaces, and each one's
	// starting screen column; col has one extra entry for the end.
	var chars []string
	var col []int
	line := 1
	begin, end := 0, -1
	sc := 0
	prevCR := false
	for i, r := range query {
		n := len(chars)
		ch := query[i : i+len(string(r))]
		if r == '\t' {
			ch = " "
		}
		if r == '\r' || r == '\n' {
			if n < loc {
				// "\r\n" counts as one line break.
				if r == '\r' || n == 0 || !prevCR {
					line++
				}
				begin = n + 1
			} else {
				end = n
				chars = append(chars, ch)
				col = append(col, sc)
				break
			}
		}
		prevCR = r == '\r'
		chars = append(chars, ch)
		col = append(col, sc)
		w := runeWidth(r)
		if w <= 0 {
			w = 1
		}
		sc += w
	}
	if end < 0 {
		end = len(chars)
		col = append(col, sc)
	}
	if loc > len(chars) {
		return ""
	}
	cutLeft, cutRight := false, false
	if col[end]-col[begin] > errContextWidth {
		if col[begin]+errContextWidth >= col[loc]+errMinRightCut {
			for col[end]-col[begin] > errContextWidth {
				end--
			}
			cutRight = true
		} else {
			for col[loc]+errMinRightCut < col[end] {
				end--
				cutRight = true
			}
			for col[end]-col[begin] > errContextWidth {
				begin++
				cutLeft = true
			}
		}
	}
	prefix := fmt.Sprintf("LINE %d: ", line)
	if cutLeft {
		prefix += "..."
	}
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(strings.Join(chars[begin:end], ""))
	if cutRight {
		b.WriteString("...")
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", displayWidth(prefix)+col[loc]-col[begin]))
	b.WriteString("^\n")
	return b.String()
}
