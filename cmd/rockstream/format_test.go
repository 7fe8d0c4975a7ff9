package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream"
)

// typeOIDs names the PostgreSQL types the golden files use.
var typeOIDs = map[string]uint32{
	"bool": 16, "int8": 20, "int2": 21, "int4": 23, "text": 25, "oid": 26,
	"float4": 700, "float8": 701, "money": 790, "varchar": 1043,
	"date": 1082, "timestamp": 1114, "numeric": 1700, "jsonb": 3802,
}

// TestFormat runs the golden files in testdata/format. Commands:
//
//	aligned | csv
//	<column>:<type> ...        first line: the columns, or (none)
//	<value> ...                one line per row; () is a row of no values
//
// prints the result as psql's aligned or CSV format. A value is NULL, a
// bare word, or a Go-quoted string (for spaces, quotes, newlines, tabs...);
// a column name is a bare word or a Go-quoted string.
//
//	error pos=<n>
//	<statement text>
//
// prints the LINE context psql shows for an error at character n.
//
// Every output line ends with '$' so that trailing spaces, which are part
// of psql's format, stay visible and exact.
func TestFormat(t *testing.T) {
	datadriven.Walk(t, "testdata/format", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			switch d.Cmd {
			case "aligned", "csv":
				res, err := parseResult(d.Input)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				if d.Cmd == "aligned" {
					err = writeAligned(&out, res)
				} else {
					err = writeCSV(&out, res)
				}
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
			case "error":
				var pos int
				d.ScanArgs(t, "pos", &pos)
				out.WriteString(errorContext(d.Input, pos))
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			return markLineEnds(out.String())
		})
	})
}

// markLineEnds appends '$' to every line of s.
func markLineEnds(s string) string {
	if s == "" {
		return "(empty)\n"
	}
	return strings.ReplaceAll(s, "\n", "$\n")
}

// parseResult reads a result set written as described at TestFormat.
func parseResult(input string) (*rockstream.Result, error) {
	lines := strings.Split(input, "\n")
	res := &rockstream.Result{Columns: []rockstream.Column{}}
	if lines[0] == "(none)" {
		lines[0] = ""
	}
	header, err := splitValues(lines[0])
	if err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	for _, h := range header {
		if h == nil {
			return nil, fmt.Errorf("columns: NULL is not a column")
		}
		i := strings.LastIndexByte(*h, ':')
		if i < 0 {
			return nil, fmt.Errorf("column %q: want name:type", *h)
		}
		name, typ := (*h)[:i], (*h)[i+1:]
		if uq, err := strconv.Unquote(name); err == nil {
			name = uq
		}
		oid, ok := typeOIDs[typ]
		if !ok {
			return nil, fmt.Errorf("column %q: unknown type %q", name, typ)
		}
		res.Columns = append(res.Columns, rockstream.Column{Name: name, TypeName: typ, TypeOID: oid})
	}
	for _, l := range lines[1:] {
		if l == "()" {
			res.Rows = append(res.Rows, []*string{})
			continue
		}
		row, err := splitValues(l)
		if err != nil {
			return nil, fmt.Errorf("row %q: %w", l, err)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// splitValues splits a line into bare words, NULLs and Go-quoted strings.
// A column token "name":type keeps its quotes for parseResult.
func splitValues(line string) ([]*string, error) {
	var vals []*string
	for {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			return vals, nil
		}
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, err
			}
			line = line[len(q):]
			if strings.HasPrefix(line, ":") {
				// A quoted column name followed by its type.
				end := strings.IndexByte(line, ' ')
				if end < 0 {
					end = len(line)
				}
				v := q + line[:end]
				vals = append(vals, &v)
				line = line[end:]
				continue
			}
			v, _ := strconv.Unquote(q)
			vals = append(vals, &v)
			continue
		}
		end := strings.IndexByte(line, ' ')
		if end < 0 {
			end = len(line)
		}
		word := line[:end]
		line = line[end:]
		if word == "NULL" {
			vals = append(vals, nil)
			continue
		}
		vals = append(vals, &word)
	}
}

// TestScriptStatements checks how a file is split into the statements
// psql would send one by one (a -c string is sent whole).
func TestScriptStatements(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1;", "SELECT 2;"}},
		{"SELECT 1 ;", []string{"SELECT 1 ;"}},
		{"SELECT 1", []string{"SELECT 1"}},
		{"", nil},
		{" ;; -- nothing\n", nil},
		// Leading whitespace and -- comments are dropped, as psql does;
		// comments inside a statement and /* */ comments are kept.
		{"-- note\n  SELECT\n 1 -- one\n;\n", []string{"SELECT\n 1 -- one\n;"}},
		{"/* lead */ SELECT 1;", []string{"/* lead */ SELECT 1;"}},
		{"SELECT 'a;b' AS \"x;y\"; SELECT $$;$$", []string{"SELECT 'a;b' AS \"x;y\";", "SELECT $$;$$"}},
		// Text that is not a statement still runs, to fail in the parser.
		{"selec 1;\nSELECT 2;", []string{"selec 1;", "SELECT 2;"}},
		{"SELECT 1; xyz 'a;b'; /* c */ ;; abc", []string{"SELECT 1;", "xyz 'a;b';", "abc"}},
	} {
		got, err := script{text: tc.text}.statements()
		if err != nil {
			t.Errorf("statements(%q): %v", tc.text, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("statements(%q) = %q; want %q", tc.text, got, tc.want)
		}
	}
}
