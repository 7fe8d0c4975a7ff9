package oracle

import (
	"fmt"
	"slices"
	"strings"
)

// RockStream's extensions need a word of help to be compared with
// PostgreSQL: a statement PostgreSQL cannot run as written (TUMBLE and HOP
// in FROM, a table's event-time lateness, an INSERT whose late rows a
// watermark drops) carries the PostgreSQL statement that does the same
// ("--! postgres"), and RockStream's own statements and system relations
// run on RockStream alone, with the rows they must return
// ("--! rockstream-only", "--! rows").

// parseExtension reads the directives of this file. It reports whether
// name was one of them.
func (e *Expectation) parseExtension(name, rest string) (bool, error) {
	switch name {
	case "postgres":
		if rest == "" {
			return true, fmt.Errorf("postgres needs the statement PostgreSQL runs instead")
		}
		e.Postgres = strings.TrimSpace(e.Postgres + " " + rest)
	case "rockstream-only":
		if rest != "" {
			return true, fmt.Errorf("rockstream-only takes no argument")
		}
		e.EngineOnly = true
	case "rows":
		if !e.EngineOnly {
			return true, fmt.Errorf("rows follows rockstream-only")
		}
		e.HasRows = true
		if rest != "" {
			e.EngineRows = append(e.EngineRows, rest)
		}
	default:
		return false, nil
	}
	if e.EngineOnly && (e.Postgres != "" || e.Error != "" || e.EngineOnlyError != "") {
		return true, fmt.Errorf("rockstream-only goes with no other directive but rows")
	}
	return true, nil
}

// refSQL is the statement PostgreSQL runs for st.
func (st Statement) refSQL() string {
	if st.Expect.Postgres != "" {
		return st.Expect.Postgres
	}
	return st.SQL
}

// sutSQL is the statement the system under test runs for st: the
// script's, unless the system under test is not RockStream (then it runs
// what PostgreSQL runs).
func (r *Runner) sutSQL(st Statement) string {
	if r.SkipEngineOnly {
		return st.refSQL()
	}
	return st.SQL
}

// checkEngineOnly describes how a rockstream-only statement's outcome
// differs from the directives, or returns "".
func checkEngineOnly(e Expectation, res *Result, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("failed with %s; want success", err)
	case !e.HasRows:
		return ""
	}
	var got []string
	for _, row := range res.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = *v
			}
		}
		got = append(got, strings.Join(vals, "|"))
	}
	if slices.Equal(got, e.EngineRows) {
		return ""
	}
	return fmt.Sprintf("returned\n    %s\n  want\n    %s", strings.Join(got, "\n    "), strings.Join(e.EngineRows, "\n    "))
}

// formatExtensions writes the directives of this file for FormatScript.
func formatExtensions(b *strings.Builder, e Expectation) {
	if e.Postgres != "" {
		fmt.Fprintf(b, "%s postgres %s\n", directivePrefix, e.Postgres)
	}
	if e.EngineOnly {
		fmt.Fprintf(b, "%s rockstream-only\n", directivePrefix)
	}
	for _, r := range e.EngineRows {
		fmt.Fprintf(b, "%s rows %s\n", directivePrefix, r)
	}
	if e.HasRows && len(e.EngineRows) == 0 {
		fmt.Fprintf(b, "%s rows\n", directivePrefix)
	}
}
