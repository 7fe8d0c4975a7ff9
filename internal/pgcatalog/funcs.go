package pgcatalog

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// The system information functions clients call (version(),
// current_user, pg_get_viewdef(), format_type(), ...). They are bound
// only in a session's ad-hoc queries (sql.SystemCatalog); a materialized
// view cannot use them.

var (
	tText  = types.Of(types.Text)
	tName  = types.Of(types.Name)
	tBool  = types.Of(types.Bool)
	tInt4  = types.Of(types.Int4)
	tInt8  = types.Of(types.Int8)
	tOid   = types.Of(types.Oid)
	tClass = types.Of(types.RegClass)
)

// processStart is reported by pg_postmaster_start_time().
var processStart = time.Now()

// sig is a shorthand for one overload.
func sig(result types.Type, eval func(a []types.Value) (types.Value, error), args ...types.Type) sql.SystemFunc {
	return sql.SystemFunc{Args: args, Result: result, Eval: eval}
}

// nonStrict marks an overload that sees NULL arguments.
func nonStrict(f sql.SystemFunc) sql.SystemFunc { f.NonStrict = true; return f }

func constant(v types.Value) func([]types.Value) (types.Value, error) {
	return func([]types.Value) (types.Value, error) { return v, nil }
}

// SystemFunction is sql.SystemCatalog's: the overloads of name, or nil
// when name is not a system function or c answers no session.
func (c *Catalog) SystemFunction(name string) []sql.SystemFunc {
	if c.session == nil {
		return nil
	}
	if f := c.dumpFunction(name); f != nil {
		return f
	}
	switch name {
	case "version":
		return []sql.SystemFunc{sig(tText, constant(types.MakeText(versionString())))}
	case "current_database":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText(c.currentDatabase())))}
	case "current_user":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText(c.currentRole())))}
	case "session_user":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText(c.currentUser())))}
	case "current_schema":
		cur := types.Null
		if p := searchPathOf(c.src); len(p) > 0 {
			cur = types.MakeText(p[0])
		}
		return []sql.SystemFunc{nonStrict(sig(tName, constant(cur)))}
	case "current_schemas":
		// The search path's existing schemas, with pg_catalog (implicit)
		// first when asked for.
		return []sql.SystemFunc{sig(types.ArrayType(tName), func(a []types.Value) (types.Value, error) {
			path := []types.Value{}
			for _, s := range searchPathOf(c.src) {
				path = append(path, types.MakeText(s))
			}
			if a[0].Bool() {
				path = append([]types.Value{types.MakeText(pgCatalogSchema)}, path...)
			}
			return types.MakeArray(types.Name, path), nil
		}, tBool)}
	case "pg_backend_pid":
		return []sql.SystemFunc{sig(tInt4, constant(types.MakeInt(types.Int4, int64(c.session.PID))))}
	case "pg_is_in_recovery":
		return []sql.SystemFunc{sig(tBool, constant(types.MakeBool(false)))}
	case "pg_postmaster_start_time", "pg_conf_load_time":
		return []sql.SystemFunc{sig(types.Of(types.TimestampTZ), constant(types.MakeTimestampTZ(processStart.UnixMicro())))}
	case "set_config":
		if c.session == nil || c.session.SetConfig == nil {
			return nil
		}
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			v, err := c.session.SetConfig(a[0].Str(), a[1].Str(), a[2].Bool())
			return types.MakeText(v), err
		}, tText, tText, tBool)}
	case "current_setting":
		return []sql.SystemFunc{
			sig(tText, func(a []types.Value) (types.Value, error) { return c.currentSetting(a[0].Str(), false) }, tText),
			sig(tText, func(a []types.Value) (types.Value, error) { return c.currentSetting(a[0].Str(), a[1].Bool()) }, tText, tBool),
		}
	case "pg_get_userbyid":
		return []sql.SystemFunc{sig(tName, func(a []types.Value) (types.Value, error) {
			return types.MakeText(c.roleName(a[0].OID())), nil
		}, tOid)}
	case "pg_table_is_visible":
		return []sql.SystemFunc{sig(tBool, func(a []types.Value) (types.Value, error) {
			p := c.snapshot()
			r := p.relation(a[0].OID())
			if r == nil {
				r = p.indexOwner(a[0].OID())
			}
			if r == nil {
				return types.Null, nil
			}
			return types.MakeBool(p.visible(r)), nil
		}, tOid)}
	case "pg_type_is_visible":
		return []sql.SystemFunc{sig(tBool, func(a []types.Value) (types.Value, error) {
			return boolOrNull(pgTypeByOID(a[0].OID()) != nil), nil
		}, tOid)}
	case "pg_function_is_visible":
		return []sql.SystemFunc{sig(tBool, func(a []types.Value) (types.Value, error) {
			if u := c.userFunctionByOID(a[0].OID()); u != nil {
				return types.MakeBool(c.functionVisible(u)), nil
			}
			return boolOrNull(procByOID(a[0].OID()) != nil), nil
		}, tOid)}
	case "format_type":
		return []sql.SystemFunc{nonStrict(sig(tText, formatType, tOid, tInt4))}
	case "obj_description", "col_description":
		return c.descriptionFuncs(name)
	case "shobj_description":
		return []sql.SystemFunc{nonStrict(sig(tText, constant(types.Null), tOid, tName)),
			nonStrict(sig(tText, constant(types.Null), tOid))}
	case "has_table_privilege", "has_any_column_privilege":
		return c.privilegeFuncs("table", c.tableByName, func(o uint32) (uint64, bool) {
			p := c.snapshot()
			if p.relation(o) == nil {
				return 0, false
			}
			return c.relationID(o), true
		})
	case "has_schema_privilege":
		return c.privilegeFuncs("schema", func(s string) (uint64, error) {
			if c.namespaceOID(s) == 0 {
				return 0, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", s)
			}
			return uint64(c.namespaceOID(s)), nil
		}, func(o uint32) (uint64, bool) { return uint64(o), c.namespaceName(o) != "" })
	case "has_database_privilege":
		return c.privilegeFuncs("database", func(s string) (uint64, error) {
			if s != c.currentDatabase() {
				return 0, errs.Newf(errs.UndefinedObject, "database %q does not exist", s)
			}
			return databaseOID, nil
		}, func(o uint32) (uint64, bool) { return databaseOID, o == databaseOID })
	case "pg_has_role":
		return c.pgHasRoleFuncs()
	case "pg_encoding_to_char":
		return []sql.SystemFunc{sig(tName, func(a []types.Value) (types.Value, error) {
			if a[0].Int() == 6 {
				return types.MakeText("UTF8"), nil
			}
			return types.MakeText(""), nil
		}, tInt4)}
	case "pg_get_expr":
		expr := func(a []types.Value) (types.Value, error) { return a[0], nil }
		return []sql.SystemFunc{sig(tText, expr, tText, tOid), sig(tText, expr, tText, tOid, tBool)}
	case "pg_get_indexdef":
		return []sql.SystemFunc{
			sig(tText, func(a []types.Value) (types.Value, error) { return c.indexDef(a[0].OID(), 0, false), nil }, tOid),
			sig(tText, func(a []types.Value) (types.Value, error) {
				return c.indexDef(a[0].OID(), a[1].Int(), a[2].Bool()), nil
			}, tOid, tInt4, tBool),
		}
	case "pg_get_constraintdef":
		def := func(a []types.Value) (types.Value, error) { return c.constraintDef(a[0].OID()), nil }
		return []sql.SystemFunc{sig(tText, def, tOid), sig(tText, def, tOid, tBool)}
	case "pg_get_viewdef":
		byOID := func(a []types.Value) (types.Value, error) { return c.viewDef(c.snapshot().relation(a[0].OID())), nil }
		byName := func(a []types.Value) (types.Value, error) {
			r := c.snapshot().find(a[0].Str())
			if r == nil {
				return types.Null, errs.Newf(errs.UndefinedTable, "relation %q does not exist", a[0].Str())
			}
			return c.viewDef(r), nil
		}
		return []sql.SystemFunc{sig(tText, byOID, tOid), sig(tText, byOID, tOid, tBool), sig(tText, byOID, tOid, tInt4),
			sig(tText, byName, tText), sig(tText, byName, tText, tBool)}
	case "pg_get_function_result":
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			p := procByOID(a[0].OID())
			if u := c.userFunctionByOID(a[0].OID()); u != nil {
				return types.MakeText(u.Result.String()), nil
			}
			if p == nil {
				return types.Null, nil
			}
			return types.MakeText(p.Result.String()), nil
		}, tOid)}
	case "pg_get_function_arguments", "pg_get_function_identity_arguments":
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			p := procByOID(a[0].OID())
			if u := c.userFunctionByOID(a[0].OID()); u != nil {
				return types.MakeText(u.Arguments), nil
			}
			if p == nil {
				return types.Null, nil
			}
			names := make([]string, len(p.Args))
			for i, t := range p.Args {
				names[i] = t.String()
			}
			return types.MakeText(strings.Join(names, ", ")), nil
		}, tOid)}
	case "pg_get_ruledef", "pg_get_triggerdef", "pg_get_partkeydef", "pg_get_statisticsobjdef_columns":
		// RockStream has no rules, triggers, partitions or extended
		// statistics: no OID names one.
		return []sql.SystemFunc{sig(tText, constant(types.Null), tOid), sig(tText, constant(types.Null), tOid, tBool)}
	case "pg_relation_is_publishable":
		return []sql.SystemFunc{sig(tBool, constant(types.MakeBool(false)), tClass)}
	case "pg_get_serial_sequence":
		return []sql.SystemFunc{sig(tText, constant(types.Null), tText, tText)}
	case "quote_ident":
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			return types.MakeText(quoteIdent(a[0].Str())), nil
		}, tText)}
	case "pg_size_pretty":
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			return types.MakeText(sizePretty(a[0].Int())), nil
		}, tInt8)}
	case "pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size":
		// RockStream does not account storage per relation yet.
		return []sql.SystemFunc{sig(tInt8, func(a []types.Value) (types.Value, error) {
			if c.snapshot().relation(a[0].OID()) == nil {
				return types.Null, nil
			}
			return types.MakeInt(types.Int8, 0), nil
		}, tClass)}
	case "to_regclass", "to_regtype", "to_regnamespace", "to_regrole", "to_regproc":
		id := map[string]types.TypeID{"to_regclass": types.RegClass, "to_regtype": types.RegType,
			"to_regnamespace": types.RegNamespace, "to_regrole": types.RegRole, "to_regproc": types.RegProc}[name]
		return []sql.SystemFunc{sig(types.Of(id), func(a []types.Value) (types.Value, error) {
			o, display, err := c.RegLookup(id, a[0].Str())
			if err != nil {
				return types.Null, nil
			}
			return types.MakeReg(id, o, display), nil
		}, tText)}
	}
	return nil
}

func boolOrNull(ok bool) types.Value {
	if !ok {
		return types.Null
	}
	return types.MakeBool(true)
}

// versionString is version()'s text: PostgreSQL's form, naming
// RockStream.
func versionString() string {
	return fmt.Sprintf("PostgreSQL 15.0 (RockStream) on %s-%s, compiled by %s, 64-bit",
		goruntime.GOARCH, goruntime.GOOS, goruntime.Version())
}

func (c *Catalog) currentSetting(name string, missingOK bool) (types.Value, error) {
	n := strings.ToLower(name)
	if !c.knownSetting(n) {
		if missingOK {
			return types.Null, nil
		}
		return types.Null, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return types.MakeText(c.session.Setting(n)), nil
}

// knownSetting reports whether name is a setting the engine knows.
func (c *Catalog) knownSetting(name string) bool {
	c.sortedSettings()
	return c.settings.known[name]
}

// roleName is pg_get_userbyid's answer.
func (c *Catalog) roleName(oid uint32) string {
	for _, r := range c.roles() {
		if r.oid == oid {
			return r.name
		}
	}
	return fmt.Sprintf("unknown (OID=%d)", oid)
}

func (c *Catalog) relationExists(name string) (bool, error) {
	if _, _, err := c.RegLookup(types.RegClass, name); err != nil {
		return false, err
	}
	return true, nil
}

// formatType is format_type(type OID, typmod): the type's name with its
// modifiers, "???" for an OID that names no type, NULL for a NULL OID.
func formatType(a []types.Value) (types.Value, error) {
	if a[0].IsNull() {
		return types.Null, nil
	}
	mod := int32(-1)
	if !a[1].IsNull() {
		mod = int32(a[1].Int())
	}
	t, ok := types.TypeByOIDTypmod(a[0].OID(), mod)
	if !ok {
		return types.MakeText("???"), nil
	}
	return types.MakeText(t.String()), nil
}

// indexOwner returns the relation whose index has the given OID.
func (p *pgSnapshot) indexOwner(oid uint32) *pgRelation {
	if ix := p.indexes[oid]; ix != nil {
		return ix.rel
	}
	return nil
}

// indexDef is pg_get_indexdef: the CREATE INDEX statement of an index,
// or with column > 0 that key column's name. pretty leaves out the
// table's schema when the search path finds the table.
func (c *Catalog) indexDef(oid uint32, column int64, pretty bool) types.Value {
	ix := c.snapshot().indexes[oid]
	if ix == nil {
		return types.Null
	}
	if column > 0 {
		if column > int64(len(ix.cols)) {
			return types.MakeText("")
		}
		return types.MakeText(quoteIdent(ix.rel.cols[ix.cols[column-1]].Name))
	}
	return types.MakeText(indexDef(ix, pretty && c.snapshot().visible(ix.rel)))
}

func indexDef(ix *pgIndex, unqualified bool) string {
	r := ix.rel
	table := quoteIdent(r.schema) + "." + quoteIdent(r.name)
	if unqualified {
		table = quoteIdent(r.name)
	}
	unique, nulls := "", ""
	if ix.primary || ix.unique {
		unique = "UNIQUE "
	}
	if ix.nullsNotDistinct {
		nulls = " NULLS NOT DISTINCT"
	}
	return fmt.Sprintf("CREATE %sINDEX %s ON %s USING btree (%s)%s", unique, quoteIdent(ix.name), table, columnList(r, ix.cols), nulls)
}

// columnList is the names of r's columns cols, quoted, comma-separated.
func columnList(r *pgRelation, cols []int) string {
	names := make([]string, len(cols))
	for i, k := range cols {
		names[i] = quoteIdent(r.cols[k].Name)
	}
	return strings.Join(names, ", ")
}

func pkColumns(r *pgRelation) string {
	names := make([]string, len(r.pk))
	for i, k := range r.pk {
		names[i] = quoteIdent(r.cols[k].Name)
	}
	return strings.Join(names, ", ")
}

// constraintDef is pg_get_constraintdef of a primary key or a UNIQUE
// constraint.
func (c *Catalog) constraintDef(oid uint32) types.Value {
	if ix := c.snapshot().indexes[oid-uniqueConstraintOffset]; ix != nil && ix.constraint {
		nulls := ""
		if ix.nullsNotDistinct {
			nulls = "NULLS NOT DISTINCT "
		}
		return types.MakeText("UNIQUE " + nulls + "(" + columnList(ix.rel, ix.cols) + ")")
	}
	r := c.snapshot().byOID[oid-pkConstraintOffset]
	if r == nil || len(r.pk) == 0 {
		return types.Null
	}
	return types.MakeText("PRIMARY KEY (" + pkColumns(r) + ")")
}

// viewDef is pg_get_viewdef: the defining query of a view or
// materialized view as it was written.
func (c *Catalog) viewDef(r *pgRelation) types.Value {
	if r == nil || r.viewQuery == "" {
		return types.Null
	}
	q := strings.TrimSpace(r.viewQuery)
	if !strings.HasSuffix(q, ";") {
		q += ";"
	}
	return types.MakeText(" " + q)
}

// sizePretty is pg_size_pretty(bigint): bytes, kB, MB, GB, TB, PB with
// PostgreSQL's rounding (halves away from zero at each step past 10239).
func sizePretty(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	const limit = 10 * 1024
	if abs(n) < limit {
		return fmt.Sprintf("%d %s", n, units[0])
	}
	size := n
	for i := 1; i < len(units); i++ {
		// Keep one extra bit for rounding.
		half := size / 512
		rounded := (half + sign(half)) / 2
		if abs(rounded) < limit || i == len(units)-1 {
			return fmt.Sprintf("%d %s", rounded, units[i])
		}
		size /= 1024
	}
	return ""
}

func sign(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

// quoteIdent is quote_ident (types.QuoteIdent).
func quoteIdent(s string) string { return types.QuoteIdent(s) }
