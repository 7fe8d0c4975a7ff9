package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

// ALTER ... SET SCHEMA.
//
// A SQL function moves to another schema when nothing calls it: its key,
// its definition's schema and its catalog record's statement (rewritten
// to name the new schema, so that recovery creates it there) change; its
// id does not. Views and functions name what they call by signature, so
// a function they call is not moved (0A000), nor is a relation or a
// sequence: those keep the schema they were created in.

// alterObjectSchema runs ALTER {FUNCTION | TABLE | VIEW | MATERIALIZED
// VIEW | SEQUENCE} ... SET SCHEMA.
func alterObjectSchema(cat *catalog, as *pg.AlterObjectSchemaStmt) (*catalog, *Result, error) {
	if as.ObjectType != pg.ObjectType_OBJECT_FUNCTION {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "ALTER %s ... SET SCHEMA is not supported: only a function moves to another schema",
			objectTypeName(as.ObjectType))
	}
	res := &Result{Tag: "ALTER FUNCTION"}
	owa := as.Object.GetObjectWithArgs()
	if owa == nil {
		return nil, nil, errs.New(errs.SyntaxError, "ALTER FUNCTION needs a function name")
	}
	f, err := findFunction(cat, cat.searchPath(), owa, as.MissingOk)
	if err != nil || f == nil {
		return nil, res, err
	}
	to := as.Newschema
	switch {
	case to == "pg_catalog" || to == "information_schema" || to == "rockstream_catalog":
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "cannot move objects into or out of system schemas")
	case !cat.schemaExists(to):
		return nil, nil, errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", to)
	}
	key := to
	if to == publicSchema {
		key = ""
	}
	sig := f.def.Signature()
	if f.def.Schema == key {
		// As in PostgreSQL: nothing to do.
		return cat, res, nil
	}
	moved := *f.def
	moved.Schema = key
	if cat.functionBySignature(moved.Signature()) != nil {
		return nil, nil, errs.Newf(errs.DuplicateFunction, "function %s(%s) already exists in schema %q", f.def.Name, f.def.IdentityArgs(), to)
	}
	if rels, fns := cat.functionDependents(sig), cat.functionCallers(sig); len(rels) > 0 || len(fns) > 0 {
		what := ""
		if len(rels) > 0 {
			what = rels[0].kindName() + " " + rels[0].name
		} else {
			what = "function " + fns[0].def.Signature()
		}
		return nil, nil, errs.Newf(errs.FeatureNotSupported,
			"ALTER FUNCTION ... SET SCHEMA of a function that is called is not supported: %s calls %s", what, sig)
	}
	text, err := renamedFunctionSQL(f.sqlText, to, f.def.Name)
	if err != nil {
		return nil, nil, err
	}
	nc := cat.clone()
	nc.removeFunction(f)
	nc.setFunction(&function{id: f.id, def: &moved, sqlText: text, uses: f.uses, path: f.path})
	return nc, res, nil
}

// renamedFunctionSQL rewrites a CREATE FUNCTION statement to create the
// function as schema.name.
func renamedFunctionSQL(text, schema, name string) (string, error) {
	tree, err := parse(text)
	if err != nil {
		return "", err
	}
	cs := tree.Stmts[0].Stmt.GetCreateFunctionStmt()
	if cs == nil {
		return "", errs.New(errs.DataCorrupted, "a function's definition is not CREATE FUNCTION")
	}
	cs.Funcname = []*pg.Node{pg.MakeStrNode(schema), pg.MakeStrNode(name)}
	return pg.Deparse(tree)
}
