package runtime

import (
	"fmt"
	"hash/fnv"
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

// SystemFunction implements sql.SystemCatalog: the overloads of name, or
// nil when name is not a system function or c answers no session.
func (c *catalog) SystemFunction(name string) []sql.SystemFunc {
	if c.session == nil {
		return nil
	}
	switch name {
	case "version":
		return []sql.SystemFunc{sig(tText, constant(types.MakeText(versionString())))}
	case "current_database":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText(c.currentDatabase())))}
	case "current_user", "session_user":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText(c.currentUser())))}
	case "current_schema":
		return []sql.SystemFunc{sig(tName, constant(types.MakeText("public")))}
	case "current_schemas":
		// The search path: pg_catalog (implicit) and public.
		return []sql.SystemFunc{sig(types.ArrayType(tName), func(a []types.Value) (types.Value, error) {
			path := []types.Value{types.MakeText("public")}
			if a[0].Bool() {
				path = append([]types.Value{types.MakeText(pgCatalogSchema)}, path...)
			}
			return types.MakeArray(types.Name, path), nil
		}, tBool)}
	case "pg_backend_pid":
		return []sql.SystemFunc{sig(tInt4, constant(types.MakeInt(types.Int4, int64(c.session.pid))))}
	case "pg_is_in_recovery":
		return []sql.SystemFunc{sig(tBool, constant(types.MakeBool(false)))}
	case "pg_postmaster_start_time", "pg_conf_load_time":
		return []sql.SystemFunc{sig(types.Of(types.TimestampTZ), constant(types.MakeTimestampTZ(processStart.UnixMicro())))}
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
			return boolOrNull(procByOID(a[0].OID()) != nil), nil
		}, tOid)}
	case "format_type":
		return []sql.SystemFunc{nonStrict(sig(tText, formatType, tOid, tInt4))}
	case "obj_description", "shobj_description":
		return []sql.SystemFunc{nonStrict(sig(tText, constant(types.Null), tOid, tName)),
			nonStrict(sig(tText, constant(types.Null), tOid))}
	case "col_description":
		return []sql.SystemFunc{nonStrict(sig(tText, constant(types.Null), tOid, tInt4))}
	case "has_table_privilege", "has_any_column_privilege":
		return c.privilegeFuncs(func(s string) (bool, error) { return c.relationExists(s) },
			func(o uint32) bool { return c.snapshot().relation(o) != nil })
	case "has_schema_privilege":
		return c.privilegeFuncs(func(s string) (bool, error) {
			if namespaceOID(s) == 0 {
				return false, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", s)
			}
			return true, nil
		}, func(o uint32) bool { return namespaceName(o) != "" })
	case "has_database_privilege":
		return c.privilegeFuncs(func(s string) (bool, error) {
			if s != c.currentDatabase() {
				return false, errs.Newf(errs.UndefinedObject, "database %q does not exist", s)
			}
			return true, nil
		}, func(o uint32) bool { return o == databaseOID })
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
			if p == nil {
				return types.Null, nil
			}
			return types.MakeText(p.Result.String()), nil
		}, tOid)}
	case "pg_get_function_arguments", "pg_get_function_identity_arguments":
		return []sql.SystemFunc{sig(tText, func(a []types.Value) (types.Value, error) {
			p := procByOID(a[0].OID())
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

// backendPID gives a session a stable number for pg_backend_pid().
func backendPID(s *Session) int32 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%p", s)
	return int32(h.Sum32() & 0x3fffffff)
}

func (c *catalog) currentSetting(name string, missingOK bool) (types.Value, error) {
	n := strings.ToLower(name)
	if _, ok := settings[n]; !ok {
		if missingOK {
			return types.Null, nil
		}
		return types.Null, errs.Newf(errs.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return types.MakeText(c.session.setting(n)), nil
}

// roleName is pg_get_userbyid's answer.
func (c *catalog) roleName(oid uint32) string {
	for _, r := range c.roles() {
		if r.oid == oid {
			return r.name
		}
	}
	return fmt.Sprintf("unknown (OID=%d)", oid)
}

func namespaceName(oid uint32) string {
	for _, n := range namespaces {
		if n.oid == oid {
			return n.name
		}
	}
	return ""
}

func (c *catalog) relationExists(name string) (bool, error) {
	if _, _, err := c.RegLookup(types.RegClass, name); err != nil {
		return false, err
	}
	return true, nil
}

// privilegeFuncs are the has_*_privilege overloads: every role may do
// everything to every object that exists. A name that names nothing is
// an error, an OID that names nothing is NULL, as in PostgreSQL.
func (c *catalog) privilegeFuncs(byName func(string) (bool, error), byOID func(uint32) bool) []sql.SystemFunc {
	name := func(v types.Value) (types.Value, error) {
		ok, err := byName(v.Str())
		if err != nil {
			return types.Null, err
		}
		return types.MakeBool(ok), nil
	}
	oid := func(v types.Value) (types.Value, error) { return boolOrNull(byOID(v.OID())), nil }
	role := func(v types.Value) error {
		for _, r := range c.roles() {
			if r.name == v.Str() {
				return nil
			}
		}
		return errs.Newf(errs.UndefinedObject, "role %q does not exist", v.Str())
	}
	return []sql.SystemFunc{
		sig(tBool, func(a []types.Value) (types.Value, error) { return name(a[0]) }, tText, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) { return oid(a[0]) }, tOid, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) {
			if err := role(a[0]); err != nil {
				return types.Null, err
			}
			return name(a[1])
		}, tName, tText, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) {
			if err := role(a[0]); err != nil {
				return types.Null, err
			}
			return oid(a[1])
		}, tName, tOid, tText),
		sig(tBool, func(a []types.Value) (types.Value, error) { return oid(a[1]) }, tOid, tOid, tText),
	}
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

// indexOwner returns the table whose primary-key index has the given OID.
func (p *pgSnapshot) indexOwner(oid uint32) *pgRelation {
	if r := p.byOID[oid-pkIndexOffset]; r != nil && len(r.pk) > 0 {
		return r
	}
	return nil
}

// indexDef is pg_get_indexdef: the CREATE INDEX statement of a primary
// key's index, or with column > 0 that key column's name. pretty leaves
// out the table's schema when the search path finds the table.
func (c *catalog) indexDef(oid uint32, column int64, pretty bool) types.Value {
	r := c.snapshot().indexOwner(oid)
	if r == nil {
		return types.Null
	}
	if column > 0 {
		if column > int64(len(r.pk)) {
			return types.MakeText("")
		}
		return types.MakeText(quoteIdent(r.cols[r.pk[column-1]].Name))
	}
	return types.MakeText(indexDef(r, pretty && c.snapshot().visible(r)))
}

func indexDef(r *pgRelation, unqualified bool) string {
	table := quoteIdent(r.schema) + "." + quoteIdent(r.name)
	if unqualified {
		table = quoteIdent(r.name)
	}
	return fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s USING btree (%s)", quoteIdent(pkName(r)), table, pkColumns(r))
}

func pkColumns(r *pgRelation) string {
	names := make([]string, len(r.pk))
	for i, k := range r.pk {
		names[i] = quoteIdent(r.cols[k].Name)
	}
	return strings.Join(names, ", ")
}

// constraintDef is pg_get_constraintdef of a primary key.
func (c *catalog) constraintDef(oid uint32) types.Value {
	r := c.snapshot().byOID[oid-pkConstraintOffset]
	if r == nil || len(r.pk) == 0 {
		return types.Null
	}
	return types.MakeText("PRIMARY KEY (" + pkColumns(r) + ")")
}

// viewDef is pg_get_viewdef: the defining query of a view or
// materialized view as it was written.
func (c *catalog) viewDef(r *pgRelation) types.Value {
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
