package main

import (
	"strings"

	"github.com/rockstream/rockstream"
)

// A script is one source of SQL text for the sql command: a -c string, a
// -f file or standard input.
type script struct {
	text string
	// command is true for a -c string, which psql sends to the server as
	// it was given, as one query.
	command bool
}

// statements splits the script into the statement texts that psql would
// send to the server one by one: each starts at its first token (leading
// whitespace and "--" comments dropped) and ends with its terminating
// semicolon, if it has one. Error positions are reported against this
// text, so they match psql's.
//
// Text between the statements SplitStatements returns that is more than
// whitespace, comments and semicolons is run as statements too, so that
// nothing in a script is skipped silently: malformed input reaches the
// parser and fails with a syntax error, as in psql.
func (s script) statements() ([]string, error) {
	stmts, err := rockstream.SplitStatements(s.text)
	if err != nil {
		return nil, err
	}
	var out []string
	cursor := 0
	for _, stmt := range stmts {
		text, start, end, ok := locateStatement(s.text, cursor, stmt)
		if !ok {
			out = append(out, text)
			continue
		}
		out = append(out, unsplitStatements(s.text[cursor:start])...)
		out = append(out, text)
		cursor = end
	}
	out = append(out, unsplitStatements(s.text[cursor:])...)
	return out, nil
}

// locateStatement finds stmt in script at or after cursor and returns the
// statement as psql would send it, with its start and end offsets in
// script. If stmt cannot be found verbatim it is returned unchanged with
// ok false.
func locateStatement(script string, cursor int, stmt string) (text string, start, end int, ok bool) {
	stmt = skipSpaceAndLineComments(stmt)
	i := strings.Index(script[cursor:], stmt)
	if i < 0 || stmt == "" {
		return stmt, cursor, cursor, false
	}
	start = cursor + i
	end = start + len(stmt)
	if j := len(script) - len(skipSpaceAndLineComments(script[end:])); j < len(script) && script[j] == ';' {
		end = j + 1
	}
	return script[start:end], start, end, true
}

// unsplitStatements returns the statements in text, which lies between
// two statements of a script, each with its terminating semicolon; it
// returns none when text holds only whitespace, comments and semicolons.
func unsplitStatements(text string) []string {
	var out []string
	for {
		text = skipSpaceAndComments(text)
		if text == "" {
			return out
		}
		if text[0] == ';' {
			text = text[1:]
			continue
		}
		n := statementEnd(text)
		out = append(out, text[:n])
		text = text[n:]
	}
}

// statementEnd returns the length of the statement that begins text,
// through its first semicolon outside quotes and comments, or all of text.
func statementEnd(text string) int {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == ';':
			return i + 1
		case c == '\'' || c == '"':
			j := strings.IndexByte(text[i+1:], c)
			if j < 0 {
				return len(text)
			}
			i += j + 1
		case strings.HasPrefix(text[i:], "--") || strings.HasPrefix(text[i:], "/*"):
			i = len(text) - len(skipSpaceAndComments(text[i:])) - 1
		}
	}
	return len(text)
}

// skipSpaceAndLineComments drops the whitespace and "--" comments that
// begin s.
func skipSpaceAndLineComments(s string) string {
	for {
		t := strings.TrimLeft(s, " \t\n\r\f\v")
		if !strings.HasPrefix(t, "--") {
			return t
		}
		nl := strings.IndexByte(t, '\n')
		if nl < 0 {
			return ""
		}
		s = t[nl+1:]
	}
}

// skipSpaceAndComments drops the whitespace and comments, "--" and
// (nested) "/* */", that begin s.
func skipSpaceAndComments(s string) string {
	for {
		s = skipSpaceAndLineComments(s)
		if !strings.HasPrefix(s, "/*") {
			return s
		}
		depth := 0
		i := 0
		for i < len(s) {
			switch {
			case strings.HasPrefix(s[i:], "/*"):
				depth++
				i += 2
			case strings.HasPrefix(s[i:], "*/"):
				depth--
				i += 2
			default:
				i++
			}
			if depth == 0 {
				break
			}
		}
		s = s[i:]
	}
}
