package pgcdc

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/types"
)

// Table is an upstream table as the source replicates it: its qualified
// name, its columns in attribute order, and how its old rows are
// identified in UPDATE and DELETE messages.
type Table struct {
	Schema, Name string
	Columns      []Column
	// Key lists the primary key's column positions; nil when the table has
	// no primary key.
	Key []int
	// FullIdentity is true when the table's REPLICA IDENTITY is FULL: old
	// tuples then carry the whole old row.
	FullIdentity bool
}

// Column is one upstream column: its name, PostgreSQL type (OID and
// typmod, as pg_attribute and Relation messages give them) and the
// RockStream type its values are parsed as.
type Column struct {
	Name    string
	OID     uint32
	TypMod  int32
	NotNull bool
	Type    types.Type
}

// QualifiedName is schema.name with identifiers quoted where needed.
func (t *Table) QualifiedName() string {
	return QuoteIdent(t.Schema) + "." + QuoteIdent(t.Name)
}

// QuoteIdent quotes a PostgreSQL identifier.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// PostgreSQL type OIDs the source maps without going through
// types.TypeByOID (which knows only RockStream's own types).
const (
	oidBpchar = 1042
)

// MapType returns the RockStream type holding values of the upstream type
// oid with modifier typmod. bpchar (character(n)) maps to text: its values
// keep the blank padding PostgreSQL sends.
func MapType(oid uint32, typmod int32) (types.Type, error) {
	if oid == oidBpchar {
		return types.Of(types.Text), nil
	}
	t, ok := types.TypeByOID(oid)
	if !ok || t.ID == types.Unknown {
		return types.Type{}, fmt.Errorf("type with OID %d is not supported by RockStream", oid)
	}
	if typmod < 0 {
		return t, nil
	}
	const varhdrsz = 4
	switch t.ID {
	case types.Numeric:
		mod := typmod - varhdrsz
		precision := (mod >> 16) & 0xffff
		// PostgreSQL 15 allows a negative scale: 11 bits, sign-extended.
		scale := ((mod & 0x7ff) ^ 1024) - 1024
		return types.Type{ID: types.Numeric, Precision: precision, Scale: scale, Length: -1}, nil
	case types.Varchar:
		return types.VarcharType(typmod - varhdrsz), nil
	case types.Timestamp, types.TimestampTZ:
		t.Precision = typmod
		return t, nil
	case types.Interval:
		precision := typmod & 0xffff
		if precision != 0xffff {
			t.Precision = precision
		}
		if fields := types.IntervalFields((typmod >> 16) & 0x7fff); fields != 0x7fff {
			t.Fields = fields
		}
		return t, nil
	}
	return t, nil
}

// SchemaChangeError reports that an upstream table no longer has the
// columns the source was created for.
type SchemaChangeError struct {
	Table  string // schema.name
	Change string // what differs
}

func (e *SchemaChangeError) Error() string {
	return fmt.Sprintf("upstream table %s changed: %s; the source stops rather than apply rows of another shape (recreate the source to pick up the new schema)", e.Table, e.Change)
}

// relationColumn is the part of a Relation message's column the schema
// check compares.
type relationColumn struct {
	Name   string
	OID    uint32
	TypMod int32
}

// checkRelation compares the columns of a Relation message with the
// table's and describes the first difference.
func checkRelation(t *Table, cols []relationColumn) error {
	diff := func(format string, args ...any) error {
		return &SchemaChangeError{Table: t.Schema + "." + t.Name, Change: fmt.Sprintf(format, args...)}
	}
	byName := map[string]int{}
	for i, c := range t.Columns {
		byName[c.Name] = i
	}
	seen := map[string]bool{}
	for _, c := range cols {
		seen[c.Name] = true
		i, ok := byName[c.Name]
		if !ok {
			return diff("column %q was added", c.Name)
		}
		want := t.Columns[i]
		if want.OID != c.OID || want.TypMod != c.TypMod {
			got, err := MapType(c.OID, c.TypMod)
			gotName := fmt.Sprintf("type OID %d", c.OID)
			if err == nil {
				gotName = got.String()
			}
			return diff("column %q changed type from %s to %s", c.Name, want.Type, gotName)
		}
	}
	for _, c := range t.Columns {
		if !seen[c.Name] {
			return diff("column %q was dropped", c.Name)
		}
	}
	for i, c := range cols {
		if t.Columns[i].Name != c.Name {
			return diff("columns were reordered (position %d is now %q, was %q)", i+1, c.Name, t.Columns[i].Name)
		}
	}
	return nil
}
