package runtime

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

func checkNewName(cat *catalog, rv *pg.RangeVar) (string, error) {
	if rv.Relpersistence == "t" {
		return "", errs.New(errs.FeatureNotSupported, "temporary relations are not supported")
	}
	name, err := cat.newObjectKey(rv)
	if err != nil {
		return "", err
	}
	if cat.relationNameTaken(name) {
		return rv.Relname, errs.Newf(errs.DuplicateTable, "relation %q already exists", rv.Relname)
	}
	return name, nil
}

// existsSkipping is the NOTICE of CREATE ... IF NOT EXISTS when the name
// is taken, by a relation of any kind, as PostgreSQL words it.
func existsSkipping(name string) string {
	return fmt.Sprintf("relation %q already exists, skipping", name)
}

func createTable(_ state.Store, cat *catalog, text string, cs *pg.CreateStmt) (*catalog, *Result, error) {
	name, err := checkNewName(cat, cs.Relation)
	if err != nil {
		if cs.IfNotExists && errs.CodeOf(err) == errs.DuplicateTable {
			return nil, &Result{Tag: "CREATE TABLE", skipped: existsSkipping(name)}, nil
		}
		return nil, nil, err
	}
	if len(cs.InhRelations) > 0 || cs.Partspec != nil || cs.Partbound != nil || cs.OfTypename != nil {
		return nil, nil, errs.New(errs.FeatureNotSupported, "inheritance, partitioning and typed tables are not supported")
	}
	o := &object{name: name, kind: sql.Table, sqlText: text}
	var b sql.Binder
	b.Cat = cat
	var pkNames []string
	for _, elt := range cs.TableElts {
		if c := elt.GetConstraint(); c != nil {
			names, err := tableConstraint(c)
			if err != nil {
				return nil, nil, err
			}
			if pkNames != nil && names != nil {
				return nil, nil, errs.Newf(errs.InvalidColumnRef, "multiple primary keys for table %q are not allowed", name)
			}
			if names != nil {
				pkNames = names
			}
			continue
		}
		cd := elt.GetColumnDef()
		if cd == nil {
			return nil, nil, errs.New(errs.FeatureNotSupported, "this kind of table element is not supported")
		}
		for _, c := range o.cols {
			if c.Name == cd.Colname {
				return nil, nil, errs.Newf(errs.DuplicateColumn, "column %q specified more than once", cd.Colname)
			}
		}
		t, err := typeOf(cd.TypeName)
		if err != nil {
			return nil, nil, err
		}
		if err := checkStoredType(t); err != nil {
			return nil, nil, err
		}
		if err := sql.CheckColumnCollation(cd.CollClause, t); err != nil {
			return nil, nil, err
		}
		notNull := cd.IsNotNull
		var def plan.Expr
		for _, cn := range cd.Constraints {
			c := cn.GetConstraint()
			switch c.Contype {
			case pg.ConstrType_CONSTR_NOTNULL:
				notNull = true
			case pg.ConstrType_CONSTR_NULL:
			case pg.ConstrType_CONSTR_DEFAULT:
				if def, err = bindDefault(&b, c.RawExpr, t, cd.Colname); err != nil {
					return nil, nil, err
				}
			case pg.ConstrType_CONSTR_PRIMARY:
				if pkNames != nil {
					return nil, nil, errs.Newf(errs.InvalidColumnRef, "multiple primary keys for table %q are not allowed", name)
				}
				pkNames = []string{cd.Colname}
			case pg.ConstrType_CONSTR_UNIQUE:
				// Its index is made once the table is (uniqueconstraint.go).
			default:
				return nil, nil, errs.Newf(errs.FeatureNotSupported, "column constraint %s is not supported", constraintName(c.Contype))
			}
		}
		o.cols = append(o.cols, plan.Column{Name: cd.Colname, Type: t})
		o.notNull = append(o.notNull, notNull)
		o.defaults = append(o.defaults, def)
	}
	for _, pkn := range pkNames {
		idx := -1
		for i, c := range o.cols {
			if c.Name == pkn {
				idx = i
			}
		}
		if idx < 0 {
			return nil, nil, errs.Newf(errs.UndefinedColumn, "column %q named in key does not exist", pkn)
		}
		for _, j := range o.pk {
			if j == idx {
				return nil, nil, errs.Newf(errs.DuplicateColumn, "column %q appears twice in primary key constraint", pkn)
			}
		}
		o.pk = append(o.pk, idx)
		o.notNull[idx] = true
	}
	if o.lateness, err = tableOptions(o, cs.Options); err != nil {
		return nil, nil, err
	}
	if o.lateness != nil && cat.shard() != nil {
		// Each shard would advance its watermark over its own rows.
		return nil, nil, unsupportedInShard("a table with a lateness bound")
	}
	o.funcDeps, o.funcPath = b.UsedFunctions, cat.funcPathOf(b.UsedFunctions)
	if err := checkUnstored(o); err != nil {
		return nil, nil, err
	}
	nc := cat.clone()
	o.id = nc.nextID
	nc.nextID++
	nc.byName[name] = o
	return nc, &Result{Tag: "CREATE TABLE"}, nil
}

// tableConstraint returns the primary-key column names of a table
// constraint, or an error for constraints that are not supported.
func tableConstraint(c *pg.Constraint) ([]string, error) {
	if c.Contype == pg.ConstrType_CONSTR_UNIQUE {
		// Its index is made once the table is (uniqueconstraint.go).
		return nil, nil
	}
	if c.Contype != pg.ConstrType_CONSTR_PRIMARY {
		return nil, errs.Newf(errs.FeatureNotSupported, "table constraint %s is not supported", constraintName(c.Contype))
	}
	var names []string
	for _, k := range c.Keys {
		names = append(names, k.GetString_().Sval)
	}
	return names, nil
}

func constraintName(t pg.ConstrType) string {
	switch t {
	case pg.ConstrType_CONSTR_CHECK:
		return "CHECK"
	case pg.ConstrType_CONSTR_UNIQUE:
		return "UNIQUE"
	case pg.ConstrType_CONSTR_FOREIGN:
		return "FOREIGN KEY"
	case pg.ConstrType_CONSTR_EXCLUSION:
		return "EXCLUDE"
	case pg.ConstrType_CONSTR_GENERATED:
		return "GENERATED"
	case pg.ConstrType_CONSTR_IDENTITY:
		return "IDENTITY"
	}
	return strings.TrimPrefix(t.String(), "CONSTR_")
}

// typeOf resolves a column's declared type, as the binder resolves the
// type of a cast.
func typeOf(tn *pg.TypeName) (types.Type, error) { return sql.TypeOf(tn) }

// checkStoredType refuses the OID alias types (regclass, ...) as the type
// of a stored column: a stored value would keep the name of an object
// that may be dropped, and a view's would be named without the session's
// catalog.
func checkStoredType(t types.Type) error {
	if types.IsReg(t.ID) || t.ID.IsArray() && types.IsReg(t.ID.Elem()) {
		return errs.Newf(errs.FeatureNotSupported, "columns of type %s are not supported: store the object's oid", t)
	}
	return nil
}

// relationNames returns the relation names a statement refers to, except
// names of its own CTEs.
func relationNames(n *pg.Node) []string {
	seen := map[string]bool{}
	ctes := map[string]bool{}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case *pg.RangeVar:
			name := normalizeName(x.Schemaname, x.Relname)
			if !seen[name] && !ctes[name] {
				seen[name] = true
				out = append(out, name)
			}
		case *pg.CommonTableExpr:
			ctes[x.Ctename] = true
		case *pg.RangeFunction:
			// TUMBLE(relation, ...) and HOP(relation, ...) read relation.
			if rv := sql.TimeWindowSource(x); rv != nil {
				walk(rv)
			}
		}
	}
	pgWalk(n, walk)
	return out
}

func createView(st state.Store, cat *catalog, text string, vs *pg.ViewStmt) (*catalog, *Result, error) {
	return createViewWith(st, cat, text, vs, nil)
}

// createViewWith is createView binding the definition through images
// (inputs.go); nil records them.
func createViewWith(st state.Store, cat *catalog, text string, vs *pg.ViewStmt, images map[string]*inputImage) (*catalog, *Result, error) {
	name, err := checkNewName(cat, vs.View)
	if err != nil {
		return nil, nil, err
	}
	if len(vs.Options) > 0 || vs.WithCheckOption != pg.ViewCheckOption_NO_CHECK_OPTION {
		return nil, nil, errs.New(errs.FeatureNotSupported, "view options are not supported")
	}
	bc := definitionCatalog(cat, images, images == nil)
	b := sql.Binder{Cat: bc}
	p, err := b.Query(vs.Query)
	if err != nil {
		return nil, nil, err
	}
	cols, err := viewColumns(p, vs.Aliases, "CREATE VIEW specifies more column names than columns")
	if err != nil {
		return nil, nil, err
	}
	o := &object{name: name, kind: sql.View, cols: cols, sqlText: text, query: vs.Query, deps: relationNames(vs.Query), funcDeps: b.UsedFunctions, funcPath: cat.funcPathOf(b.UsedFunctions), inputs: bc.images}
	if len(vs.Aliases) > 0 {
		o.query = renameQuery(vs.Query, cols)
	}
	nc := cat.clone()
	o.id = nc.nextID
	nc.nextID++
	nc.byName[name] = o
	return nc, &Result{Tag: "CREATE VIEW"}, nil
}

// renameQuery wraps a view's query so that its output columns carry the
// names the view declares: SELECT * FROM (query) AS v(names...).
func renameQuery(q *pg.Node, cols []plan.Column) *pg.Node {
	var aliases []*pg.Node
	for _, c := range cols {
		aliases = append(aliases, pg.MakeStrNode(c.Name))
	}
	sub := &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: q,
		Alias:    &pg.Alias{Aliasname: "v", Colnames: aliases},
	}}}
	star := pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeAStarNode()}, -1), -1)
	return &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{star},
		FromClause: []*pg.Node{sub},
	}}}
}

// viewColumns returns a view's columns: the query's, renamed by the
// optional column list, with duplicate names rejected. tooMany is the
// message for a list longer than the query's columns, which PostgreSQL
// words differently for views and materialized views.
func viewColumns(p plan.Node, aliases []*pg.Node, tooMany string) ([]plan.Column, error) {
	cols := append([]plan.Column(nil), p.Columns()...)
	if len(aliases) > len(cols) {
		return nil, errs.New(errs.SyntaxError, tooMany)
	}
	for i, a := range aliases {
		cols[i].Name = a.GetString_().Sval
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.Name] {
			return nil, errs.Newf(errs.DuplicateColumn, "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
		if c.Type.ID == types.Unknown {
			return nil, errs.Newf(errs.FeatureNotSupported, "column %q has no type; cast it", c.Name)
		}
	}
	return cols, nil
}

// createMatView creates a materialized view and backfills it: the whole
// current contents of its inputs are its first delta. When recovering, the
// view's state is already stored and only its circuit is rebuilt.
func createMatView(ctx context.Context, st state.Store, w *epochWrite, text string, cs *pg.CreateTableAsStmt, recovering bool, recursionLimit int, zone types.Zone) (*catalog, *Result, error) {
	return createMatViewWith(ctx, st, w, text, cs, recovering, recursionLimit, zone, nil)
}

// createMatViewWith is createMatView binding the definition through
// images (inputs.go); nil records them.
func createMatViewWith(ctx context.Context, st state.Store, w *epochWrite, text string, cs *pg.CreateTableAsStmt, recovering bool, recursionLimit int, zone types.Zone, images map[string]*inputImage) (*catalog, *Result, error) {
	cat := w.cat
	if cs.Objtype != pg.ObjectType_OBJECT_MATVIEW {
		return nil, nil, errs.New(errs.FeatureNotSupported, "CREATE TABLE AS is not supported; use CREATE MATERIALIZED VIEW")
	}
	into := cs.Into
	name, err := checkNewName(cat, into.Rel)
	if err != nil && !(cs.IfNotExists && errs.CodeOf(err) == errs.DuplicateTable) {
		return nil, nil, err
	}
	// As in PostgreSQL, the query is analyzed before IF NOT EXISTS looks
	// at the name: a query naming a missing column fails either way.
	bc := definitionCatalog(cat, images, images == nil)
	b := sql.Binder{Cat: bc, Zone: zone, TemporalFilters: true}
	p, berr := b.Query(cs.Query)
	if berr != nil {
		return nil, nil, berr
	}
	if err != nil {
		return nil, &Result{Tag: "CREATE MATERIALIZED VIEW", skipped: existsSkipping(name)}, nil
	}
	if into.SkipData {
		return nil, nil, errs.New(errs.FeatureNotSupported, "WITH NO DATA is not supported: a materialized view is always maintained")
	}
	if recursionLimit == ops.DefaultMaxIterations {
		recursionLimit = 0
	}
	limitRecursion(p, recursionLimit)
	cols, err := viewColumns(p, into.ColNames, "too many column names were specified")
	if err != nil {
		return nil, nil, err
	}
	if len(cols) > sql.MaxTableColumns {
		// A materialized view is stored as a table is, and PostgreSQL
		// bounds it the same way.
		return nil, nil, sql.TooManyTableColumns()
	}
	for _, c := range cols {
		if err := checkStoredType(c.Type); err != nil {
			return nil, nil, err
		}
	}
	nc := cat.clone()
	o := &object{id: nc.nextID, name: name, kind: sql.MaterializedView, cols: cols, sqlText: text,
		query: cs.Query, deps: relationNames(cs.Query), funcDeps: b.UsedFunctions, funcPath: cat.funcPathOf(b.UsedFunctions), maxIterations: recursionLimit, created: w.epoch, inputs: bc.images, zone: zone}
	nc.nextID++
	o.route = groupRoute(p, len(cols))
	o.circuit, err = diff.BuildView(p, relPrefix(nsOpState, o.id), viewLookups(cat))
	if err != nil {
		return nil, nil, err
	}
	if err := checkViewInputs(cat, o.circuit); err != nil {
		return nil, nil, err
	}
	if err := checkTemporalNows(&b, o.circuit); err != nil {
		return nil, nil, err
	}
	if o.circuit.Temporal() && cat.shard() != nil {
		// Each shard's clock would move its rows at other epochs.
		return nil, nil, unsupportedInShard("a materialized view over the time (now())")
	}
	if recovering {
		nc.byName[name] = o
		return nc, nil, nil
	}
	if o.circuit.Temporal() {
		// The epoch's time reaches the other temporal views first, so
		// that every view stands at the stored clock.
		if err := stepDueViews(ctx, st, w); err != nil {
			return nil, nil, err
		}
		if err := setEpochClock(st, w); err != nil {
			return nil, nil, err
		}
	}
	out, err := backfill(ctx, st, cat, o)
	if err != nil {
		return nil, nil, viewError(o, err)
	}
	if err := applyDelta(st, o.rowsPrefix(), out, o.keyOf()); err != nil {
		return nil, nil, err
	}
	if err := setViewRows(st, o.id, out); err != nil {
		return nil, nil, err
	}
	if err := logChanges(st, w, o, out); err != nil {
		return nil, nil, err
	}
	var n int64
	for _, e := range out {
		n += e.Weight
	}
	nc.byName[name] = o
	return nc, &Result{Tag: fmt.Sprintf("SELECT %d", n)}, nil
}

func drop(st state.Store, cat *catalog, ds *pg.DropStmt) (*catalog, *Result, error) {
	var want []sqlKind
	var tag string
	switch ds.RemoveType {
	case pg.ObjectType_OBJECT_TABLE:
		want, tag = []sqlKind{sql.Table}, "DROP TABLE"
	case pg.ObjectType_OBJECT_VIEW:
		want, tag = []sqlKind{sql.View}, "DROP VIEW"
	case pg.ObjectType_OBJECT_MATVIEW:
		want, tag = []sqlKind{sql.MaterializedView}, "DROP MATERIALIZED VIEW"
	case pg.ObjectType_OBJECT_FUNCTION:
		return dropFunctions(st, cat, ds)
	default:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "DROP %s is not supported", strings.TrimPrefix(ds.RemoveType.String(), "OBJECT_"))
	}
	nc := cat.clone()
	// Names resolve, and errors describe objects, through the search
	// path; the catalog installed keeps none.
	nc.path = cat.path
	defer func() { nc.path = nil }()
	cascade := ds.Behavior == pg.DropBehavior_DROP_CASCADE
	for _, obj := range ds.Objects {
		var parts []string
		for _, item := range obj.GetList().Items {
			parts = append(parts, item.GetString_().Sval)
		}
		if err := cat.checkNameParts(parts); err != nil {
			return nil, nil, err
		}
		name := parts[len(parts)-1]
		if len(parts) > 1 {
			name = qualifiedName(parts[len(parts)-2], name)
		}
		o := nc.resolve(name)
		if o != nil && o.system != nil {
			return nil, nil, systemRelationError(o, "drop")
		}
		if o == nil {
			if ds.MissingOk {
				continue
			}
			return nil, nil, errs.Newf(errs.UndefinedTable, "%s %q does not exist", kindWord(want[0]), parts[len(parts)-1])
		}
		if o.kind != want[0] {
			return nil, nil, errs.Newf(errs.WrongObjectType, "%q is not a %s", name, kindWord(want[0]))
		}
		if err := dropObject(st, nc, o, cascade); err != nil {
			return nil, nil, err
		}
	}
	return nc, &Result{Tag: tag}, nil
}

type sqlKind = sql.RelationKind

func kindWord(k sql.RelationKind) string {
	switch k {
	case sql.Table:
		return "table"
	case sql.MaterializedView:
		return "materialized view"
	}
	return "view"
}

// dropObject removes o and, with cascade, everything that depends on it;
// without cascade, dependents are an error. State is released.
func dropObject(st state.Store, cat *catalog, o *object, cascade bool) error {
	if err := cat.dropTargetCheck(o); err != nil {
		return err
	}
	deps := cat.dependents(o.name)
	if len(deps) > 0 && !cascade {
		return cat.dependentsError(o)
	}
	for _, d := range deps {
		if cat.byName[d.name] == nil {
			continue
		}
		if err := dropObject(st, cat, d, true); err != nil {
			return err
		}
	}
	delete(cat.byName, o.name)
	if err := dropPrivileges(st, o); err != nil {
		return err
	}
	if err := dropIndexesOf(st, cat, o); err != nil {
		return err
	}
	if err := dropComments(st, o); err != nil {
		return err
	}
	if o.kind == sql.View {
		return nil
	}
	for _, p := range [][]byte{o.rowsPrefix(), relPrefix(nsOpState, o.id), relPrefix(nsChangeLog, o.id)} {
		if err := deletePrefix(st, p); err != nil {
			return err
		}
	}
	if o.kind == sql.MaterializedView {
		if err := st.Delete(viewRowsKey(o.id)); err != nil {
			return err
		}
	}
	if o.storesInArrivalOrder() {
		if err := st.Delete(appendSeqKey(o.id)); err != nil {
			return err
		}
	}
	if o.unstored {
		if err := st.Delete(unstoredKey(o.id)); err != nil {
			return err
		}
	}
	if o.lateness != nil {
		return st.Delete(latenessKey(o.id))
	}
	return nil
}
