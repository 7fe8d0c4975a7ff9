package runtime

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
)

// SQL functions (CREATE FUNCTION ... LANGUAGE SQL, internal/sql's
// functions.go) live in the catalog beside the relations, in a name space
// of their own keyed by name, each name holding its overloads. As for a
// relation, the key of a function in public is its name and that of one
// in another schema "schema.name"; a call or DROP FUNCTION naming no
// schema looks the name up through the search path (catalog.Functions). Each has a
// catalog id from the same sequence as the relations and a catalog record
// (kind "function") holding its CREATE FUNCTION statement, so that
// replaying the records in id order recreates a function before every
// view and function that calls it.
//
// The binder inlines a function's body where it is called, so a view
// holds no call: what it depends on is recorded instead (object.funcDeps,
// and for a function the functions its body calls). DROP FUNCTION of a
// function something depends on fails with 2BP01 naming it, and CASCADE
// drops the dependent views and functions; a table whose column default
// calls the function is never dropped for it (2BP01 even with CASCADE). CREATE OR REPLACE FUNCTION keeps the function's
// id and result type; it is refused while a materialized view depends on
// the function, whose maintained state holds the old body's results.

// function is one SQL function of the catalog.
type function struct {
	id      uint64
	def     *sql.Function
	sqlText string
	// uses are the signatures of the functions its body calls.
	uses []string
	// path is the search path the function was created in, kept so
	// that recovery binds its body as its creation did.
	path []string
}

// Functions implements sql.FunctionCatalog.
func (c *catalog) Functions(schema, name string) []*sql.Function {
	if schema != "" {
		var out []*sql.Function
		for _, f := range c.functions[normalizeName(schema, name)] {
			out = append(out, f.def)
		}
		return out
	}
	var out []*sql.Function
	seen := map[string]bool{}
	for _, s := range c.searchPath() {
		for _, f := range c.functions[normalizeName(s, name)] {
			if args := f.def.IdentityArgs(); !seen[args] {
				seen[args] = true
				out = append(out, f.def)
			}
		}
	}
	return out
}

// SchemaExists implements sql.FunctionCatalog: a schema made with CREATE
// SCHEMA, public, or a system schema.
func (c *catalog) SchemaExists(name string) bool {
	switch name {
	case "pg_catalog", "information_schema", "rockstream_catalog":
		return true
	}
	return c.schemaExists(name)
}

// resolveFunctionName returns the key of the functions a DROP FUNCTION
// of schema.name means: the schema's, or without one the first schema
// of path holding a function called name for which has is true.
func (c *catalog) resolveFunctionName(path []string, schema, name string, has func([]*function) bool) string {
	if schema != "" {
		return normalizeName(schema, name)
	}
	for _, s := range path {
		if key := normalizeName(s, name); has(c.functions[key]) {
			return key
		}
	}
	return name
}

// functionsInSchema returns the functions of schema sch, newest first.
func (c *catalog) functionsInSchema(sch string) []*function {
	var out []*function
	all := c.allFunctions()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].def.Schema == sch {
			out = append(out, all[i])
		}
	}
	return out
}

// functionBySignature returns the function with that signature, or nil.
func (c *catalog) functionBySignature(sig string) *function {
	name, _, _ := strings.Cut(sig, "(")
	for _, f := range c.functions[name] {
		if f.def.Signature() == sig {
			return f
		}
	}
	return nil
}

// allFunctions returns the functions in id order.
func (c *catalog) allFunctions() []*function {
	var out []*function
	for _, fs := range c.functions {
		out = append(out, fs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// setFunction installs f in c (a clone), replacing the overload of the
// same signature.
func (c *catalog) setFunction(f *function) {
	if c.functions == nil {
		c.functions = map[string][]*function{}
	}
	name := f.def.QualifiedName()
	list := append([]*function(nil), c.functions[name]...)
	for i, g := range list {
		if g.def.Signature() == f.def.Signature() {
			list[i] = f
			c.functions[name] = list
			return
		}
	}
	c.functions[name] = append(list, f)
}

// removeFunction removes f from c (a clone).
func (c *catalog) removeFunction(f *function) {
	name := f.def.QualifiedName()
	var list []*function
	for _, g := range c.functions[name] {
		if g != f {
			list = append(list, g)
		}
	}
	if len(list) == 0 {
		delete(c.functions, name)
		return
	}
	c.functions[name] = list
}

// cloneFunctions copies the function name space into n, a clone of c.
func (c *catalog) cloneFunctions(n *catalog) {
	if len(c.functions) == 0 {
		return
	}
	n.functions = make(map[string][]*function, len(c.functions))
	for k, v := range c.functions {
		n.functions[k] = v
	}
}

// createFunction runs CREATE [OR REPLACE] FUNCTION.
func createFunction(cat *catalog, text string, cs *pg.CreateFunctionStmt) (*catalog, *Result, error) {
	b := &sql.Binder{Cat: cat}
	def, err := b.DefineFunction(cs)
	if err != nil {
		return nil, nil, err
	}
	if err := cat.placeFunction(def); err != nil {
		return nil, nil, err
	}
	nc := cat.clone()
	f := &function{def: def, sqlText: text, uses: def.Uses, path: cat.functionPath(def)}
	for _, u := range f.uses {
		if u == def.Signature() {
			return nil, nil, errs.Newf(errs.FeatureNotSupported, "function %s cannot call itself: a SQL function is inlined where it is called", u)
		}
	}
	if old := cat.functionBySignature(def.Signature()); old != nil {
		if !cs.Replace {
			return nil, nil, errs.Newf(errs.DuplicateFunction, "function %q already exists with same argument types", def.Signature())
		}
		if old.def.Result.ID != def.Result.ID {
			e := errs.New(errs.InvalidFunctionDef, "cannot change return type of existing function").(*errs.Error)
			e.Hint = "Use DROP FUNCTION " + def.Signature() + " first."
			return nil, nil, e
		}
		for _, o := range cat.functionDependents(def.Signature()) {
			if o.kind == sql.MaterializedView {
				return nil, nil, errs.Newf(errs.FeatureNotSupported,
					"cannot replace function %s because materialized view %s depends on it, and its maintained rows hold the old definition's results; drop the view first", def.Signature(), o.name)
			}
		}
		for _, u := range f.uses {
			if g := cat.functionBySignature(u); g != nil && g.id > old.id {
				return nil, nil, errs.Newf(errs.FeatureNotSupported,
					"cannot replace function %s by a definition calling %s, which was created after it; drop the function and create it again", def.Signature(), u)
			}
		}
		f.id = old.id
		nc.setFunction(f)
		return nc, &Result{Tag: "CREATE FUNCTION"}, nil
	}
	f.id = nc.nextID
	nc.nextID++
	nc.setFunction(f)
	return nc, &Result{Tag: "CREATE FUNCTION"}, nil
}

// functionPath is the search path the record of def keeps: the path it
// is created in when that is not public alone or def is outside public
// (whose record is otherwise replayed in def's schema alone).
func (c *catalog) functionPath(def *sql.Function) []string {
	p := c.searchPath()
	if def.Schema == "" && slices.Equal(p, defaultPath) || len(p) == 0 {
		return nil
	}
	return p
}

// funcPathOf is the search path a definition calling the functions uses
// keeps in its record: the catalog's, when one of them is outside public.
func (c *catalog) funcPathOf(uses []string) []string {
	for _, u := range uses {
		if name, _, _ := strings.Cut(u, "("); strings.Contains(name, ".") {
			return c.searchPath()
		}
	}
	return nil
}

// placeFunction sets the schema of a function defined without one to the
// creation schema, and checks that the schema can hold it.
func (c *catalog) placeFunction(def *sql.Function) error {
	sch := def.Schema
	if sch == "" {
		var err error
		if sch, err = c.creationSchema(); err != nil {
			return err
		}
	}
	switch {
	case sch == "pg_catalog" || sch == "information_schema" || sch == "rockstream_catalog":
		return errs.Newf(errs.InsufficientPrivilege, "permission denied to create function in schema %s", sch)
	case !c.schemaExists(sch):
		return errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", sch)
	case sch == publicSchema:
		sch = ""
	}
	def.Schema = sch
	return nil
}

// functionDependents returns the relations whose definitions call the
// function with signature sig, in id order.
func (c *catalog) functionDependents(sig string) []*object {
	var out []*object
	for _, o := range c.byName {
		for _, d := range o.funcDeps {
			if d == sig {
				out = append(out, o)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// functionCallers returns the functions whose bodies call sig.
func (c *catalog) functionCallers(sig string) []*function {
	var out []*function
	for _, f := range c.allFunctions() {
		for _, u := range f.uses {
			if u == sig {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// dropFunctions runs DROP FUNCTION [IF EXISTS] name[(types)], ...
func dropFunctions(st state.Store, cat *catalog, ds *pg.DropStmt) (*catalog, *Result, error) {
	nc := cat.clone()
	cascade := ds.Behavior == pg.DropBehavior_DROP_CASCADE
	for _, obj := range ds.Objects {
		owa := obj.GetObjectWithArgs()
		if owa == nil {
			return nil, nil, errs.New(errs.SyntaxError, "DROP FUNCTION needs a function name")
		}
		f, err := findFunction(nc, cat.searchPath(), owa, ds.MissingOk)
		if err != nil {
			return nil, nil, err
		}
		if f == nil {
			continue
		}
		if err := dropFunction(st, nc, f, cascade); err != nil {
			return nil, nil, err
		}
	}
	return nc, &Result{Tag: "DROP FUNCTION"}, nil
}

// findFunction returns the function owa names (name[(types)]), looked
// up through path when unqualified; nil without an error when there is
// none and missingOk is set.
func findFunction(c *catalog, path []string, owa *pg.ObjectWithArgs, missingOk bool) (*function, error) {
	var parts []string
	for _, n := range owa.Objname {
		parts = append(parts, n.GetString_().GetSval())
	}
	name, schema := parts[len(parts)-1], ""
	if len(parts) > 1 {
		schema = parts[len(parts)-2]
		if !c.schemaExists(schema) {
			if missingOk {
				return nil, nil
			}
			return nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", schema)
		}
	}
	display := strings.Join(parts, ".")
	var f *function
	if owa.ArgsUnspecified {
		fs := c.functions[c.resolveFunctionName(path, schema, name, func(fs []*function) bool { return len(fs) > 0 })]
		if len(fs) > 1 {
			return nil, errs.Newf(errs.AmbiguousFunction, "function name %q is not unique", display)
		}
		if len(fs) == 1 {
			f = fs[0]
		}
	} else {
		var ts []string
		for _, a := range owa.Objargs {
			t, err := typeOf(a.GetTypeName())
			if err != nil {
				return nil, err
			}
			ts = append(ts, sql.Unmodified(t).String())
		}
		args := "(" + strings.Join(ts, ", ") + ")"
		key := c.resolveFunctionName(path, schema, name, func(fs []*function) bool {
			for _, g := range fs {
				if "("+g.def.IdentityArgs()+")" == args {
					return true
				}
			}
			return false
		})
		f = c.functionBySignature(key + args)
		if f == nil && !missingOk {
			return nil, errs.Newf(errs.UndefinedFunction, "function %s%s does not exist", display, args)
		}
	}
	if f == nil && !missingOk {
		return nil, errs.Newf(errs.UndefinedFunction, "could not find a function named %q", display)
	}
	return f, nil
}

// dropFunction removes f and, with cascade, the relations and functions
// that call it; without cascade, those are an error.
func dropFunction(st state.Store, cat *catalog, f *function, cascade bool) error {
	sig := f.def.Signature()
	rels, fns := cat.functionDependents(sig), cat.functionCallers(sig)
	for _, o := range rels {
		if o.kind == sql.Table {
			// CASCADE would drop the column's default in PostgreSQL;
			// dropping the table with it would lose its rows.
			return errs.Newf(errs.DependentObjects, "cannot drop function %s because a column default of table %s uses it", sig, o.name)
		}
	}
	if !cascade && (len(rels) > 0 || len(fns) > 0) {
		what := ""
		if len(rels) > 0 {
			what = rels[0].kindName() + " " + rels[0].name
		} else {
			what = "function " + fns[0].def.Signature()
		}
		return errs.Newf(errs.DependentObjects, "cannot drop function %s because other objects depend on it (%s depends on function %s); use DROP ... CASCADE to drop the dependent objects too",
			sig, what, sig)
	}
	// Removed first, so that callers calling it back (a cycle made by
	// CREATE OR REPLACE) find it gone.
	cat.removeFunction(f)
	for _, o := range rels {
		if cat.byName[o.name] != o {
			continue
		}
		if err := dropObject(st, cat, o, true); err != nil {
			return err
		}
	}
	for _, g := range fns {
		if cat.functionBySignature(g.def.Signature()) != g {
			continue
		}
		if err := dropFunction(st, cat, g, true); err != nil {
			return err
		}
	}
	return nil
}

// persistFunctions writes the records of functions created or replaced
// between old and next and deletes those of functions dropped.
func persistFunctions(st state.Store, old, next *catalog) error {
	kept := map[uint64]bool{}
	for _, f := range next.allFunctions() {
		kept[f.id] = true
		if old.functionBySignature(f.def.Signature()) == f {
			continue
		}
		payload, err := json.Marshal(catalogRecord{ID: f.id, Kind: "function", Name: f.def.Signature(), SQL: f.sqlText,
			Schema: f.def.Schema, Path: f.path})
		if err != nil {
			return err
		}
		if err := st.Set(catalogKey(f.id), storage.EncodeRecord(catalogRecordKind, catalogRecordVersion, payload)); err != nil {
			return err
		}
	}
	for _, f := range old.allFunctions() {
		if !kept[f.id] {
			if err := st.Delete(catalogKey(f.id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// replayFunction re-runs a function's CREATE FUNCTION at recovery, with
// its recorded id.
func replayFunction(cat *catalog, rec catalogRecord, cs *pg.CreateFunctionStmt) (*catalog, error) {
	next, _, err := createFunction(cat, rec.SQL, cs)
	if err != nil {
		return nil, err
	}
	f := next.functionBySignature(rec.Name)
	if f == nil {
		return nil, errs.Newf(errs.DataCorrupted, "recovering function %s: its definition defines another function", rec.Name)
	}
	f.id = rec.ID
	if next.nextID <= rec.ID {
		next.nextID = rec.ID + 1
	}
	return next, nil
}

// UserFunctions implements pgcatalog.FunctionSource.
func (s catalogSource) UserFunctions() []pgcatalog.UserFunction {
	var out []pgcatalog.UserFunction
	for _, f := range s.c.allFunctions() {
		d := f.def
		out = append(out, pgcatalog.UserFunction{ID: f.id, Schema: d.Schema, Name: d.Name, ArgNames: d.ArgNames, ArgTypes: d.ArgTypes,
			Result: d.Result, Volatility: byte(d.Volatility), Strict: d.Strict, Source: d.Source, Arguments: d.Arguments()})
	}
	return out
}
