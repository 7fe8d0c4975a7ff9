package oracle

import (
	"fmt"
	"strings"
)

// Statement is one statement of a script.
type Statement struct {
	// SQL is the statement's text, from its first token to just before its
	// terminating semicolon. Comments inside it are kept.
	SQL string
	// Line is the 1-based line of the statement's first token.
	Line int
	// Expect holds what the directives before the statement ask for.
	Expect Expectation
}

// Expectation is what a script's directives say about one statement.
type Expectation struct {
	// Error, when not empty, is the SQLSTATE both systems must fail with.
	Error string
	// EngineOnlyError, when not empty, is the SQLSTATE the system under
	// test must fail with; the statement is not run on PostgreSQL. It
	// marks constructs PostgreSQL accepts and RockStream rejects by design.
	EngineOnlyError string
	// Unordered compares a query's rows as a multiset even though it has
	// an ORDER BY (whose keys are not a total order over the rows).
	Unordered bool
	// Postgres, when not empty, is what PostgreSQL runs in place of the
	// statement: the same statement written without RockStream's
	// extensions (TUMBLE and HOP, a table's lateness), or only the rows
	// a table's watermark admits. The comparison is unchanged.
	Postgres string
	// EngineOnly runs the statement on RockStream alone, where it must
	// succeed; with HasRows it must return EngineRows, in order (values
	// separated by "|", NULL for NULL). It marks RockStream's own
	// statements and relations.
	EngineOnly bool
	HasRows    bool
	EngineRows []string
}

// directivePrefix starts a directive comment line.
const directivePrefix = "--!"

// ParseScript splits a script into statements: semicolons end statements
// except inside quotes ('...', E'...', "...", $tag$...$tag$) and comments
// (-- to end of line, nested /* */). A line "--! directive" before a
// statement applies to that statement:
//
//	--! error SQLSTATE            both systems must fail with SQLSTATE
//	--! rockstream-error SQLSTATE only RockStream runs it; it must fail so
//	--! unordered                 compare rows as a multiset despite ORDER BY
//	--! postgres SQL              PostgreSQL runs SQL instead (several lines
//	                              join into one statement)
//	--! rockstream-only           only RockStream runs it; it must succeed
//	--! rows a|b|NULL             ... returning these rows, in order (one
//	                              directive per row; none: no rows)
//
// name is used in error messages.
func ParseScript(name, text string) ([]Statement, error) {
	var (
		out     []Statement
		pending Expectation
		hasDir  bool
		start   = -1 // byte offset of the current statement's first token
		line    = 1
		sLine   int
	)
	flush := func(end int) {
		if start >= 0 {
			sql := strings.TrimSpace(text[start:end])
			out = append(out, Statement{SQL: sql, Line: sLine, Expect: pending})
		}
		start = -1
		pending = Expectation{}
		hasDir = false
	}
	i := 0
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			comment := text[i : i+end]
			if strings.HasPrefix(comment, directivePrefix) {
				if start >= 0 {
					return nil, fmt.Errorf("%s:%d: directive inside a statement; put it before the statement", name, line)
				}
				if err := pending.parse(strings.TrimSpace(comment[len(directivePrefix):])); err != nil {
					return nil, fmt.Errorf("%s:%d: %v", name, line, err)
				}
				hasDir = true
			}
			i += end
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			n, lines, err := skipBlockComment(text[i:])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, line, err)
			}
			i += n
			line += lines
		case c == ';':
			if start < 0 && hasDir {
				return nil, fmt.Errorf("%s:%d: directive before an empty statement", name, line)
			}
			flush(i)
			i++
		default:
			if start < 0 {
				start, sLine = i, line
			}
			n, lines, err := skipToken(text, i)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, line, err)
			}
			i += n
			line += lines
		}
	}
	if start < 0 && hasDir {
		return nil, fmt.Errorf("%s:%d: directive at the end of the script applies to no statement", name, line)
	}
	flush(len(text))
	return out, nil
}

// parse adds one directive to e.
func (e *Expectation) parse(d string) error {
	f := strings.Fields(d)
	if len(f) == 0 {
		return fmt.Errorf("empty directive")
	}
	if done, err := e.parseExtension(f[0], strings.TrimSpace(strings.TrimPrefix(d, f[0]))); done || err != nil {
		return err
	}
	switch {
	case f[0] == "error" && len(f) == 2 && isSQLState(f[1]):
		e.Error = f[1]
	case f[0] == "rockstream-error" && len(f) == 2 && isSQLState(f[1]):
		e.EngineOnlyError = f[1]
	case f[0] == "unordered" && len(f) == 1:
		e.Unordered = true
	default:
		return fmt.Errorf("unknown directive %q (want: error SQLSTATE, rockstream-error SQLSTATE, unordered)", d)
	}
	if e.Error != "" && e.EngineOnlyError != "" {
		return fmt.Errorf("a statement cannot expect both error and rockstream-error")
	}
	return nil
}

// isSQLState reports whether s looks like a SQLSTATE: five digits or
// upper-case letters.
func isSQLState(s string) bool {
	if len(s) != 5 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// skipBlockComment returns the length of the (possibly nested) block
// comment at the start of s and the newlines in it.
func skipBlockComment(s string) (n, lines int, err error) {
	depth := 0
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(s[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i, lines, nil
			}
		default:
			if s[i] == '\n' {
				lines++
			}
			i++
		}
	}
	return 0, 0, fmt.Errorf("unterminated /* comment")
}

// skipToken returns the length of the token at text[i] (a quoted string or
// identifier, a dollar-quoted string, or one other byte) and the newlines
// in it.
func skipToken(text string, i int) (n, lines int, err error) {
	c := text[i]
	prevIdent := i > 0 && isIdentByte(text[i-1])
	switch {
	case c == '\'':
		// E'...' strings take backslash escapes; E must start a word.
		esc := i > 0 && (text[i-1] == 'e' || text[i-1] == 'E') && !(i > 1 && isIdentByte(text[i-2]))
		return skipQuoted(text[i:], '\'', esc)
	case c == '"':
		return skipQuoted(text[i:], '"', false)
	case c == '$' && !prevIdent:
		if tag, ok := dollarTag(text[i:]); ok {
			end := strings.Index(text[i+len(tag):], tag)
			if end < 0 {
				return 0, 0, fmt.Errorf("unterminated dollar-quoted string %s", tag)
			}
			n := len(tag) + end + len(tag)
			return n, strings.Count(text[i:i+n], "\n"), nil
		}
	}
	return 1, 0, nil
}

// skipQuoted returns the length of the quoted token at the start of s,
// where a doubled quote stands for itself and, when esc, a backslash
// escapes the next byte.
func skipQuoted(s string, q byte, esc bool) (n, lines int, err error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines++
		case '\\':
			if esc {
				i++
				if i < len(s) && s[i] == '\n' {
					lines++
				}
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, lines, nil
		}
	}
	return 0, 0, fmt.Errorf("unterminated quoted string or identifier")
}

// dollarTag returns the opening tag ($$ or $name$) at the start of s.
func dollarTag(s string) (string, bool) {
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			return s[:i+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		case c >= '0' && c <= '9' && i > 1:
		default:
			return "", false
		}
	}
	return "", false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// FormatScript renders statements as a script that ParseScript reads
// back: each statement with its directives, ending in a semicolon.
func FormatScript(stmts []Statement) string {
	var b strings.Builder
	for _, s := range stmts {
		if s.Expect.Error != "" {
			fmt.Fprintf(&b, "%s error %s\n", directivePrefix, s.Expect.Error)
		}
		if s.Expect.EngineOnlyError != "" {
			fmt.Fprintf(&b, "%s rockstream-error %s\n", directivePrefix, s.Expect.EngineOnlyError)
		}
		if s.Expect.Unordered {
			fmt.Fprintf(&b, "%s unordered\n", directivePrefix)
		}
		formatExtensions(&b, s.Expect)
		b.WriteString(s.SQL)
		b.WriteString(";\n")
	}
	return b.String()
}
