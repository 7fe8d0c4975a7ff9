package pgcatalog

import "github.com/rockstream/rockstream/internal/types"

// UserFunction is a SQL function created with CREATE FUNCTION, as
// pg_proc shows it: in its schema, in language sql. Its OID
// derives from its durable catalog id as a relation's does (userOID).
type UserFunction struct {
	ID uint64
	// Schema is the function's schema, "" for public.
	Schema     string
	Name       string
	ArgNames   []string // "" for a parameter without a name
	ArgTypes   []types.Type
	Result     types.Type
	Volatility byte // 'i', 's' or 'v'
	Strict     bool
	// Source is the body as written after AS; empty for a SQL-standard
	// body (RETURN expr), as prosrc.
	Source string
	// Arguments lists the arguments as pg_get_function_arguments
	// prints them (x integer, text).
	Arguments string
}

// FunctionSource is a Source that also holds SQL functions.
type FunctionSource interface {
	// UserFunctions returns the SQL functions, in any order.
	UserFunctions() []UserFunction
}

// sqlLanguageOID is pg_language's row of language sql.
const sqlLanguageOID = 14

// userFunctions returns the SQL functions of c's source.
func (c *Catalog) userFunctions() []UserFunction {
	if c == nil {
		return nil
	}
	fs, ok := c.src.(FunctionSource)
	if !ok {
		return nil
	}
	return fs.UserFunctions()
}

// userFunctionByOID returns the SQL function with that OID, or nil.
func (c *Catalog) userFunctionByOID(oid uint32) *UserFunction {
	for _, f := range c.userFunctions() {
		if userOID(f.ID) == oid {
			return &f
		}
	}
	return nil
}

// userProcRows adds pg_proc's rows of the SQL functions to b.
func (c *Catalog) userProcRows(b *rowBuilder) {
	for _, f := range c.userFunctions() {
		args := make([]types.Value, len(f.ArgTypes))
		names := make([]types.Value, len(f.ArgNames))
		named := false
		for i, a := range f.ArgTypes {
			args[i] = types.MakeOID(a.OID())
			names[i] = types.MakeText(f.ArgNames[i])
			named = named || f.ArgNames[i] != ""
		}
		b.row().set("proargtypes", types.MakeArray(types.Oid, args))
		if named {
			b.set("proargnames", types.MakeArray(types.Text, names))
		}
		b.set("oid", userOID(f.ID)).set("proname", f.Name).set("pronamespace", c.functionNamespace(f)).
			set("proowner", uint32(bootstrapRoleOID)).set("prolang", uint32(sqlLanguageOID)).
			set("procost", 100).set("prokind", "f").set("proisstrict", f.Strict).
			set("provolatile", string([]byte{f.Volatility})).set("proparallel", "u").
			set("pronargs", len(f.ArgTypes)).set("prorettype", f.Result.OID()).set("prosrc", f.Source).
			set("proargdefaults", nil).set("probin", nil).set("prosqlbody", nil)
	}
}

// functionNamespace is the OID of f's schema.
func (c *Catalog) functionNamespace(f UserFunction) uint32 {
	if f.Schema == "" {
		return publicNamespace
	}
	return c.namespaceOID(f.Schema)
}

// functionVisible reports whether f's schema is on the reading session's
// search path, as pg_function_is_visible does for a name no earlier
// schema's function of the same arguments hides.
func (c *Catalog) functionVisible(f *UserFunction) bool {
	sch := f.Schema
	if sch == "" {
		sch = "public"
	}
	for _, s := range searchPathOf(c.src) {
		if s == sch {
			return true
		}
		for _, g := range c.userFunctions() {
			if g.Name == f.Name && sameTypes(g.ArgTypes, f.ArgTypes) && (g.Schema == s || g.Schema == "" && s == "public") {
				return false
			}
		}
	}
	return false
}

func sameTypes(a, b []types.Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// sqlLanguageRow is pg_language's row of language sql.
func sqlLanguageRow(b *rowBuilder) {
	b.row().set("oid", uint32(sqlLanguageOID)).set("lanname", "sql").set("lanowner", uint32(bootstrapRoleOID)).
		set("lanpltrusted", true).set("lanvalidator", uint32(2248))
}
