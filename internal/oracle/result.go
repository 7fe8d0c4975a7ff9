package oracle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Result is one statement's outcome, with values in PostgreSQL's text
// output format.
type Result struct {
	// Columns is nil for a statement that returns no rows.
	Columns []Column
	// Rows holds the values of each row; a nil pointer is NULL.
	Rows [][]*string
	// Tag is the command tag: "SELECT 3", "INSERT 0 1", ...
	Tag string
}

// Column is one result column.
type Column struct {
	Name    string
	TypeOID uint32
}

// Error is a failed statement: its SQLSTATE and message.
type Error struct {
	SQLState string
	Message  string
}

func (e *Error) Error() string { return e.SQLState + ": " + e.Message }

// rowKey encodes a row so that two rows have equal keys exactly when they
// are equal value by value (NULL equal only to NULL).
func rowKey(row []*string) string {
	var b strings.Builder
	for _, v := range row {
		if v == nil {
			b.WriteString("N;")
			continue
		}
		b.WriteString(strconv.Itoa(len(*v)))
		b.WriteByte(':')
		b.WriteString(*v)
	}
	return b.String()
}

// FormatRow renders a row for humans: values separated by " | ", NULL as
// NULL, and a value quoted when it could be mistaken for something else
// (empty, NULL, surrounding or separator-like characters, non-printing
// bytes).
func FormatRow(row []*string) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = formatValue(v)
	}
	return "(" + strings.Join(parts, " | ") + ")"
}

func formatValue(v *string) string {
	if v == nil {
		return "NULL"
	}
	s := *v
	if s == "" || strings.EqualFold(s, "null") || strings.ContainsAny(s, "|()\"'\\") ||
		strings.TrimSpace(s) != s || strconv.Quote(s) != `"`+s+`"` {
		return strconv.Quote(s)
	}
	return s
}

// RowDiff is the difference between an expected and an actual multiset of
// rows.
type RowDiff struct {
	// Missing are expected rows the actual result lacks (with
	// multiplicity), sorted.
	Missing [][]*string
	// Extra are actual rows that were not expected (with multiplicity),
	// sorted.
	Extra [][]*string
}

// Empty reports whether the multisets were equal.
func (d RowDiff) Empty() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

// DiffMultisets compares want and got as multisets of rows.
func DiffMultisets(want, got [][]*string) RowDiff {
	count := make(map[string]int, len(want))
	rep := make(map[string][]*string, len(want))
	for _, r := range want {
		k := rowKey(r)
		count[k]++
		rep[k] = r
	}
	for _, r := range got {
		k := rowKey(r)
		count[k]--
		if _, ok := rep[k]; !ok {
			rep[k] = r
		}
	}
	// Only the rows whose counts differ are sorted (by how they print),
	// each formatted once: equal multisets cost two passes.
	var d RowDiff
	var keys []string
	shown := map[string]string{}
	for k, n := range count {
		if n != 0 {
			keys = append(keys, k)
			shown[k] = FormatRow(rep[k])
		}
	}
	sort.Slice(keys, func(i, j int) bool { return shown[keys[i]] < shown[keys[j]] })
	for _, k := range keys {
		for n := count[k]; n > 0; n-- {
			d.Missing = append(d.Missing, rep[k])
		}
		for n := count[k]; n < 0; n++ {
			d.Extra = append(d.Extra, rep[k])
		}
	}
	return d
}

// maxShownRows bounds how many rows of each kind a report lists.
const maxShownRows = 20

// Format renders the difference; wantName and gotName name the two sides.
func (d RowDiff) Format(wantName, gotName string) string {
	var b strings.Builder
	section := func(title string, rows [][]*string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "    %s (%d %s):\n", title, len(rows), plural(len(rows), "row", "rows"))
		for i, r := range rows {
			if i == maxShownRows {
				fmt.Fprintf(&b, "      ... %d more\n", len(rows)-i)
				break
			}
			fmt.Fprintf(&b, "      %s\n", FormatRow(r))
		}
	}
	section(fmt.Sprintf("missing from %s (%s has them)", gotName, wantName), d.Missing)
	section(fmt.Sprintf("extra in %s (%s does not have them)", gotName, wantName), d.Extra)
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// compareColumns describes how got's columns differ from want's (names and
// type OIDs), or returns "".
func compareColumns(want, got []Column) string {
	same := len(want) == len(got)
	for i := 0; same && i < len(want); i++ {
		same = want[i] == got[i]
	}
	if same {
		return ""
	}
	return fmt.Sprintf("    columns differ:\n      want %s\n      got  %s\n", formatColumns(want), formatColumns(got))
}

func formatColumns(cols []Column) string {
	if cols == nil {
		return "(no result set)"
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s %s", c.Name, typeName(c.TypeOID))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// typeName names the PostgreSQL types RockStream produces, by OID.
func typeName(oid uint32) string {
	switch oid {
	case 16:
		return "boolean"
	case 17:
		return "bytea"
	case 20:
		return "bigint"
	case 21:
		return "smallint"
	case 23:
		return "integer"
	case 25:
		return "text"
	case 700:
		return "real"
	case 701:
		return "double precision"
	case 1042:
		return "character"
	case 1043:
		return "character varying"
	case 1082:
		return "date"
	case 1114:
		return "timestamp"
	case 1184:
		return "timestamptz"
	case 1186:
		return "interval"
	case 3802:
		return "jsonb"
	case 1700:
		return "numeric"
	case 705:
		return "unknown"
	}
	return fmt.Sprintf("oid %d", oid)
}

// compareRows describes how got's rows differ from want's, or returns "".
// ordered compares sequences (after checking the multisets agree).
func compareRows(want, got [][]*string, ordered bool, wantName, gotName string) string {
	d := DiffMultisets(want, got)
	if !d.Empty() {
		return d.Format(wantName, gotName)
	}
	if !ordered {
		return ""
	}
	for i := range want {
		if rowKey(want[i]) != rowKey(got[i]) {
			return fmt.Sprintf("    same rows in a different order (the query has ORDER BY); first difference at row %d:\n      %s: %s\n      %s: %s\n",
				i+1, wantName, FormatRow(want[i]), gotName, FormatRow(got[i]))
		}
	}
	return ""
}
