package runtime

import (
	"context"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
)

// ALTER ... SET SCHEMA.
//
// A SQL function moves to another schema when nothing calls it: its key,
// its definition's schema and its catalog record's statement (rewritten
// to name the new schema, so that recovery creates it there) change; its
// id does not. Views and functions name what they call by signature, so
// a function they call is not moved (0A000).
//
// A relation (table, view, materialized view) moves with its indexes,
// its primary key's index among them, as in PostgreSQL: their keys
// change, their ids, rows, index entries, privileges and comments
// (all kept by id) do not. The views that read it go on reading it, as
// after a rename: they know it by id (inputs.go), so only their
// circuits' scan names change. Its catalog record keeps the statement
// that created it; recovery creates it in the record's schema, whatever
// schema that statement names (replay), so the old schema may be
// dropped after the move.

// alterObjectSchema runs ALTER FUNCTION ... SET SCHEMA; ALTER of a
// relation's schema is alterRelationSchema.
func alterObjectSchema(cat *catalog, as *pg.AlterObjectSchemaStmt) (*catalog, *Result, error) {
	if as.ObjectType != pg.ObjectType_OBJECT_FUNCTION {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "ALTER %s ... SET SCHEMA is not supported",
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
	if err := checkMoveTarget(cat, to); err != nil {
		return nil, nil, err
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

// checkMoveTarget checks that objects can be moved into schema to.
func checkMoveTarget(cat *catalog, to string) error {
	switch {
	case isSystemSchema(to):
		return errs.Newf(errs.FeatureNotSupported, "cannot move objects into or out of system schemas")
	case !cat.schemaExists(to):
		return errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", to)
	}
	return nil
}

// isSystemSchema reports whether name is a schema of system relations.
func isSystemSchema(name string) bool {
	return name == "pg_catalog" || name == "information_schema" || name == "rockstream_catalog"
}

// setSchemaKinds are the relation kinds each ALTER ... SET SCHEMA
// moves: ALTER TABLE any relation, as in PostgreSQL, the others their
// own kind only. RockStream has no sequences: ALTER SEQUENCE finds none.
var setSchemaKinds = map[pg.ObjectType][]sql.RelationKind{
	pg.ObjectType_OBJECT_TABLE:    {sql.Table, sql.View, sql.MaterializedView},
	pg.ObjectType_OBJECT_VIEW:     {sql.View},
	pg.ObjectType_OBJECT_MATVIEW:  {sql.MaterializedView},
	pg.ObjectType_OBJECT_SEQUENCE: nil,
}

// isRelationSetSchema reports whether as moves a relation
// (alterRelationSchema).
func isRelationSetSchema(as *pg.AlterObjectSchemaStmt) bool {
	_, ok := setSchemaKinds[as.ObjectType]
	return ok && as.Relation != nil
}

// alterRelationSchema runs ALTER {TABLE | VIEW | MATERIALIZED VIEW |
// SEQUENCE} [IF EXISTS] name SET SCHEMA s. Its checks come in
// PostgreSQL's order: the relation exists (42P01; a NOTICE with IF
// EXISTS), is of the statement's kind and not an index (42809), the
// schema exists (3F000), and none of the names that move is taken there
// (42P07). Ownership of the relation and CREATE on the schema are checked
// before it runs (privcheck.go).
func alterRelationSchema(ctx context.Context, st state.Store, w *epochWrite, as *pg.AlterObjectSchemaStmt, notes *notices) (*catalog, *Result, error) {
	cat := w.cat
	res := &Result{Tag: "ALTER " + objectTypeName(as.ObjectType)}
	rv := as.Relation
	if err := cat.checkDatabase(rv); err != nil {
		return nil, nil, err
	}
	if ix := cat.resolveIndex(qualifiedName(rv.Schemaname, rv.Relname)); ix != nil && cat.resolveRV(rv) == nil {
		if as.ObjectType != pg.ObjectType_OBJECT_TABLE {
			return nil, nil, notOfKind(as.ObjectType, rv.Relname)
		}
		e := errs.Newf(errs.WrongObjectType, "cannot change schema of index %q", rv.Relname).(*errs.Error)
		e.Hint = "Change the schema of the table instead."
		return nil, nil, e
	}
	o, skip, err := findRelation(cat, rv, as.MissingOk)
	if err != nil || o == nil {
		if skip != "" {
			notes.add("00000", skip)
		}
		return nil, res, err
	}
	if !slices.Contains(setSchemaKinds[as.ObjectType], o.kind) {
		return nil, nil, notOfKind(as.ObjectType, rv.Relname)
	}
	to := as.Newschema
	if err := checkMoveTarget(cat, to); err != nil {
		return nil, nil, err
	}
	from, bare := cat.splitKey(o.name)
	if from == to {
		// As in PostgreSQL: nothing to do.
		return cat, res, nil
	}
	if c := connectorNaming(cat, o.name); c != "" {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "cannot move %s %s to another schema: %s names it; drop it first", o.kindName(), o.name, c)
	}
	newKey, err := cat.newObjectKey(&pg.RangeVar{Schemaname: to, Relname: bare})
	if err != nil {
		return nil, nil, err
	}
	// The names that move: the relation's, its primary key's index's and
	// its indexes', in PostgreSQL's order.
	moving := []string{bare}
	if o.kind == sql.Table && len(o.pk) > 0 {
		moving = append(moving, bare+"_pkey")
	}
	var ixs []*index
	for _, ix := range cat.indexesInOrder() {
		if ix.rel == o.id {
			ixs = append(ixs, ix)
			_, name := cat.splitKey(ix.name)
			moving = append(moving, name)
		}
	}
	taken := constraintNames{c: cat, schema: to}
	for _, name := range moving {
		if taken.relationNameTaken(name) {
			return nil, nil, errs.Newf(errs.DuplicateTable, "relation %q already exists in schema %q", name, to)
		}
	}

	nc := cat.clone()
	if err := imageDependents(cat, nc, o); err != nil {
		return nil, nil, err
	}
	var n *object
	if o.kind == sql.Table {
		n = copyTable(o)
	} else {
		c := *nc.byName[o.name]
		n = &c
		if n.inputs == nil && n.query != nil {
			// A view defined before views kept their inputs: its names
			// resolved in its schema, which it leaves.
			bc := viewCatalog(cat, o, nil)
			b := sql.Binder{Cat: bc, Zone: o.zone}
			if _, err := b.Query(o.query); err != nil {
				return nil, nil, viewError(o, err)
			}
			n.inputs = bc.images
		}
	}
	n.name = newKey
	delete(nc.byName, o.name)
	nc.byName[n.name] = n
	for _, ix := range ixs {
		_, name := cat.splitKey(ix.name)
		nix := *ix
		nix.name = normalizeName(to, name)
		nix.relName = n.name
		nix.sqlText = nc.indexSQL(&nix, n)
		delete(nc.indexes, ix.name)
		nc.indexes[nix.name] = &nix
	}
	renameInReaders(nc, o, n.name)
	if err := refreshViews(ctx, st, w, cat, nc, o.id, nil); err != nil {
		return nil, nil, err
	}
	return nc, res, nil
}

// notOfKind is PostgreSQL's error for an ALTER of kind on a relation of
// another kind.
func notOfKind(kind pg.ObjectType, name string) error {
	return errs.Newf(errs.WrongObjectType, "%q is not a %s", name, strings.ToLower(objectTypeName(kind)))
}
