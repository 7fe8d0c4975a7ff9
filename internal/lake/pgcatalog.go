package lake

import (
	"sort"
	"strconv"
)

// The pg_catalog answers: postgres_scanner's introspection queries are
// answered from the catalog's own tables, as PostgreSQL would answer
// them for public and the user schemas (schemas.go). System relations
// (pg_catalog, information_schema) are not listed: RockLake has none to
// offer.

// Namespace OIDs as PostgreSQL 15 assigns them.
const (
	oidPgCatalog         = 11
	oidPgToast           = 99
	oidPublic            = 2200
	oidInformationSchema = 13207
)

// constraintOID is the OID RockLake reports for a table's primary key
// constraint: distinct from every table OID.
func constraintOID(t *Table) int64 { return int64(t.OID) + 1<<30 }

func oidVal(n int64) Value   { return intOf(TOid, n) }
func nameVal(s string) Value { return textOf(TName, s) }
func cols(spec ...any) []resultCol {
	out := make([]resultCol, 0, len(spec)/2)
	for i := 0; i < len(spec); i += 2 {
		out = append(out, resultCol{name: spec[i].(string), t: spec[i+1].(Type)})
	}
	return out
}

func namespacesResult(nss []namespace) *result {
	res := &result{cols: []resultCol{{name: "oid", t: TOid, tableOID: 2615, attnum: 1}, {name: "nspname", t: TName, tableOID: 2615, attnum: 2}}}
	for _, n := range nss {
		res.rows = append(res.rows, []Value{oidVal(n.oid), nameVal(n.name)})
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

// visibleTables lists the transaction's tables in public and the user
// schemas (not its temporary tables).
func (x *txn) visibleTables() []*Table {
	seen := map[uint32]bool{}
	var out []*Table
	for _, t := range x.store.liveTables() {
		if !x.ws.dropped[t.OID] && !t.Temp {
			out = append(out, t)
			seen[t.OID] = true
		}
	}
	for _, t := range x.ws.created {
		if !seen[t.OID] && !t.Temp {
			out = append(out, t)
		}
	}
	return out
}

// byNamespace orders tables by their schema's OID, then by less.
func byNamespace(tables []*Table, ns map[string]int64, less func(a, b *Table) bool) []*Table {
	sorted := append([]*Table(nil), tables...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ns[a.Schema] != ns[b.Schema] {
			return ns[a.Schema] < ns[b.Schema]
		}
		return less(a, b)
	})
	return sorted
}

func byName(a, b *Table) bool { return a.Name < b.Name }

func columnsResult(tables []*Table, ns map[string]int64, f introspectFilter) *result {
	res := &result{cols: cols(
		"namespace_id", TOid, "relname", TName, "relpages", TInt4, "attname", TName,
		"type_name", TName, "type_modifier", TInt4, "ndim", TInt4, "attnum", TInt2,
		"notnull", TBool, "constraint_id", TOid, "constraint_type", TChar, "constraint_key", TInt2Array,
		"type_schema", TName, "column_comment", TText, "table_comment", TText)}
	// The query is a UNION, so PostgreSQL names no source columns.
	for _, t := range byNamespace(tables, ns, byName) {
		if (f.rel != "" && t.Name != f.rel) || !f.allows(t.Schema) {
			continue
		}
		nsOID := oidVal(ns[t.Schema])
		for i, c := range t.Cols {
			res.rows = append(res.rows, []Value{
				nsOID, nameVal(t.Name), intOf(TInt4, 0), nameVal(c.Name),
				nameVal(c.Type.String()), intOf(TInt4, -1), intOf(TInt4, 0), intOf(TInt2, int64(i+1)),
				boolOf(c.NotNull), nullOf(TOid), nullOf(TChar), nullOf(TInt2Array),
				nameVal("pg_catalog"), nullOf(TText), nullOf(TText),
			})
		}
		if len(t.PK) > 0 {
			key := "{"
			for i, c := range t.PK {
				if i > 0 {
					key += ","
				}
				key += strconv.Itoa(c + 1)
			}
			key += "}"
			res.rows = append(res.rows, []Value{
				nsOID, nameVal(t.Name), nullOf(TInt4), nullOf(TName),
				nullOf(TName), nullOf(TInt4), nullOf(TInt4), nullOf(TInt2),
				nullOf(TBool), oidVal(constraintOID(t)), textOf(TChar, "p"), textOf(TInt2Array, key),
				nullOf(TName), nullOf(TText), nullOf(TText),
			})
		}
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

func enumsResult() *result {
	res := &result{cols: cols("oid", TOid, "enumtypid", TOid, "typname", TName, "enumlabel", TName), tag: "SELECT 0"}
	res.cols[0].tableOID, res.cols[0].attnum = 2615, 1
	res.cols[1].tableOID, res.cols[1].attnum = 3501, 2
	res.cols[2].tableOID, res.cols[2].attnum = 1247, 2
	res.cols[3].tableOID, res.cols[3].attnum = 3501, 4
	return res
}

// compositesResult lists the row types of the tables, which PostgreSQL
// reports as composite types (typtype 'c'), ordered by schema and type
// OID.
func compositesResult(tables []*Table, ns map[string]int64) *result {
	res := &result{cols: cols("oid", TOid, "id", TOid, "type", TName, "attname", TName, "typname", TName, "sub_type_schema", TName)}
	res.cols[0].tableOID, res.cols[0].attnum = 2615, 1
	res.cols[1].tableOID, res.cols[1].attnum = 1247, 12
	res.cols[2].tableOID, res.cols[2].attnum = 1247, 2
	res.cols[3].tableOID, res.cols[3].attnum = 1249, 2
	res.cols[4].tableOID, res.cols[4].attnum = 1247, 2
	res.cols[5].tableOID, res.cols[5].attnum = 2615, 2
	for _, t := range byNamespace(tables, ns, func(a, b *Table) bool { return a.OID < b.OID }) {
		for _, c := range t.Cols {
			res.rows = append(res.rows, []Value{oidVal(ns[t.Schema]), oidVal(int64(t.OID)), nameVal(t.Name),
				nameVal(c.Name), nameVal(c.Type.String()), nameVal("pg_catalog")})
		}
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

func indexesResult(tables []*Table, ns map[string]int64) *result {
	res := &result{cols: cols("oid", TOid, "tablename", TName, "indexname", TName)}
	res.cols[0].tableOID, res.cols[0].attnum = 2615, 1
	// pg_indexes is a view (OID 12043 in PostgreSQL 15).
	res.cols[1].tableOID, res.cols[1].attnum = 12043, 2
	res.cols[2].tableOID, res.cols[2].attnum = 12043, 3
	for _, t := range byNamespace(tables, ns, byName) {
		if len(t.PK) > 0 {
			res.rows = append(res.rows, []Value{oidVal(ns[t.Schema]), nameVal(t.Name), nameVal(t.pkName())})
		}
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

// ServerVersionText is what version() answers; DuckDB reads the major
// version from it.
const ServerVersionText = "PostgreSQL 15.18 (RockLake) on x86_64-pc-linux-gnu, compiled by Go, 64-bit"

func versionResult(withCount bool) *result {
	res := &result{cols: []resultCol{{name: "version", t: TText}}, tag: "SELECT 1"}
	row := []Value{textOf(TText, ServerVersionText)}
	if withCount {
		res.cols = append(res.cols, resultCol{name: "count", t: TInt8})
		row = append(row, intOf(TInt8, 0))
	}
	res.rows = [][]Value{row}
	return res
}

func (x *txn) regclassResult(name string) *result {
	res := &result{cols: []resultCol{{name: "to_regclass", t: TRegclass}}, tag: "SELECT 1"}
	v := nullOf(TRegclass)
	if t, err := x.table(relRef{name: name}); err == nil {
		v = textOf(TRegclass, t.Name)
		v.I = int64(t.OID)
	}
	res.rows = [][]Value{{v}}
	return res
}

// Views of information_schema, as PostgreSQL 15 numbers them.
const (
	oidInfoColumns  = 13295
	oidInfoSchemata = 13382
)

// schemataResult answers the text-protocol introspection's schema list
// (system schemas excluded by its WHERE clause), ordered by name.
func schemataResult(nss []namespace) *result {
	res := &result{cols: []resultCol{{name: "schema_name", t: TName, tableOID: oidInfoSchemata, attnum: 2}}}
	nss = append([]namespace(nil), nss...)
	sort.Slice(nss, func(i, j int) bool { return nss[i].name < nss[j].name })
	for _, n := range nss {
		if n.oid == oidPublic || n.oid >= firstOID {
			res.rows = append(res.rows, []Value{textOf(TName, n.name)})
		}
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

// infoColumnsResult answers the text-protocol introspection of columns,
// from information_schema.columns, ordered by schema, table and position.
func infoColumnsResult(tables []*Table, f introspectFilter) *result {
	res := &result{cols: []resultCol{
		{name: "namespace_id", t: TName, tableOID: oidInfoColumns, attnum: 2},
		{name: "relname", t: TName, tableOID: oidInfoColumns, attnum: 3},
		{name: "relpages", t: TInt4},
		{name: "attname", t: TName, tableOID: oidInfoColumns, attnum: 4},
		{name: "type_name", t: TVarchar, tableOID: oidInfoColumns, attnum: 8},
		{name: "type_modifier", t: TInt4},
		{name: "ndim", t: TInt4},
		{name: "attnum", t: TInt4, tableOID: oidInfoColumns, attnum: 5},
		{name: "notnull", t: TText},
		{name: "constraint_id", t: TText},
		{name: "constraint_type", t: TText},
		{name: "constraint_key", t: TText},
		{name: "type_schema", t: TText},
		{name: "column_comment", t: TText},
		{name: "table_comment", t: TText},
	}}
	sorted := append([]*Table(nil), tables...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Schema != sorted[j].Schema {
			return sorted[i].Schema < sorted[j].Schema
		}
		return sorted[i].Name < sorted[j].Name
	})
	for _, t := range sorted {
		if (f.rel != "" && t.Name != f.rel) || !f.allows(t.Schema) {
			continue
		}
		for i, c := range t.Cols {
			notnull := "f"
			if c.NotNull {
				notnull = "t"
			}
			res.rows = append(res.rows, []Value{
				textOf(TName, t.Schema), textOf(TName, t.Name), intOf(TInt4, 0),
				textOf(TName, c.Name), textOf(TVarchar, types[c.Type].sql), intOf(TInt4, -1),
				intOf(TInt4, 0), intOf(TInt4, int64(i+1)), textOf(TText, notnull),
				nullOf(TText), nullOf(TText), nullOf(TText), nullOf(TText), nullOf(TText), nullOf(TText),
			})
		}
	}
	res.tag = "SELECT " + strconv.Itoa(len(res.rows))
	return res
}

// allows says whether the filter's schema list admits schema.
func (f introspectFilter) allows(schema string) bool {
	if len(f.schemas) == 0 {
		return true
	}
	for _, s := range f.schemas {
		if s == schema {
			return true
		}
	}
	return false
}
