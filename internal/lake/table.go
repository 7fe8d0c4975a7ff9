package lake

// Column is one column of a stored table.
type Column struct {
	Name    string
	Type    Type
	NotNull bool
}

// Table is one version of a table's definition: what CREATE TABLE said.
// A table keeps its OID for its whole life; DROP TABLE ends the version
// (Store keeps the version range).
type Table struct {
	OID    uint32
	Schema string
	Name   string
	Cols   []Column
	// PK holds the indexes of the primary key's columns; empty when the
	// table has none.
	PK []int
	// Temp marks a session's temporary table (ON COMMIT DROP): never
	// stored, dropped when its transaction ends.
	Temp bool
}

// pkName is the name PostgreSQL gives the primary key constraint and
// its index.
func (t *Table) pkName() string { return t.Name + "_pkey" }

// col returns the index of the column named name, or -1.
func (t *Table) col(name string) int {
	for i, c := range t.Cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// qualifiedName is how error messages name a relation written as
// schema.name.
func qualifiedName(schema, name string) string {
	if schema == "" {
		return name
	}
	return schema + "." + name
}

// normSchema maps the schema a statement names to the one the table
// lives in: unqualified names resolve to public (the search_path), and
// temporary tables live in pg_temp. Names are as the parser gives them
// (unquoted ones folded to lower case, quoted ones exact), as in
// PostgreSQL.
func normSchema(s string) string {
	if s == "" {
		return "public"
	}
	return s
}
