package runtime

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// targetTable resolves the table a DML statement writes.
func targetTable(cat *catalog, rv *pg.RangeVar) (*object, error) {
	if err := cat.checkDatabase(rv); err != nil {
		return nil, err
	}
	name := qualifiedName(rv.Schemaname, rv.Relname)
	o := cat.resolve(name)
	switch {
	case o == nil:
		return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	case o.kind == sql.MaterializedView:
		return nil, errs.Newf(errs.WrongObjectType, "cannot change materialized view %q: it is maintained from its query", name)
	case o.kind == sql.View:
		return nil, errs.Newf(errs.WrongObjectType, "cannot change view %q", name)
	case o.system != nil:
		return nil, systemRelationError(o, "change")
	}
	return o, nil
}

func aliasOf(rv *pg.RangeVar) string {
	if rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return ""
}

func (o *object) columnIndex(name string) (int, error) {
	for i, c := range o.cols {
		if c.Name == name {
			return i, nil
		}
	}
	return 0, errs.Newf(errs.UndefinedColumn, "column %q of relation %q does not exist", name, o.name)
}

// checkRow enforces NOT NULL.
func (o *object) checkRow(row zset.Row) error {
	for i, nn := range o.notNull {
		if nn && row[i].IsNull() {
			return errs.Newf(errs.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", o.cols[i].Name, o.name)
		}
	}
	return nil
}

// uniqueViolation is the error of row, whose primary key another row
// holds, with PostgreSQL's detail naming the key.
func (o *object) uniqueViolation(row zset.Row) error {
	e := errs.Newf(errs.UniqueViolation, "duplicate key value violates unique constraint %q", o.name+"_pkey").(*errs.Error)
	names, vals := make([]string, len(o.pk)), make([]string, len(o.pk))
	for i, k := range o.pk {
		names[i], vals[i] = o.cols[k].Name, types.Format(row[k], o.cols[k].Type)
	}
	e.Detail = fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", "))
	return e
}

// writeTable applies a table delta and propagates it to every view.
func writeTable(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch) error {
	if o.unstored {
		return writeUnstored(ctx, st, w, o, delta)
	}
	if o.storesInArrivalOrder() {
		// Insertions only, stored as they come; the views' circuits
		// consolidate what they take in.
		if len(delta) == 0 {
			return nil
		}
		if err := checkFinal(st, o, delta); err != nil {
			return err
		}
		if err := chargeEpochWrite(ctx, delta, tableRowWrites); err != nil {
			return err
		}
		parts, err := appendRowsOn(st, o, delta, w.cat.parallelism())
		if err != nil {
			return err
		}
		return tableWrittenSplit(ctx, st, w, o, delta, parts)
	}
	var err error
	if delta, err = zset.Consolidate(delta); err != nil || len(delta) == 0 {
		return err
	}
	if err := checkFinal(st, o, delta); err != nil {
		return err
	}
	if err := chargeEpochWrite(ctx, delta, tableRowWrites); err != nil {
		return err
	}
	if !splitWrites(w.cat.parallelism(), len(delta)) {
		return writeBesideViews(ctx, st, w, o, delta, func(st state.Store) error { return applyDelta(st, o.rowsPrefix(), delta, o.keyOf()) }, nil)
	}
	parts, err := applyDeltaOn(st, o, delta, w.cat.parallelism())
	if err != nil {
		return err
	}
	return tableWrittenSplit(ctx, st, w, o, delta, parts)
}

// tableWritten completes the write of delta, stored in o's rows: the
// watermark moves past it and the views take it in (at COMMIT, in an
// epoch that defers them).
func tableWritten(ctx context.Context, st state.Store, w *epochWrite, o *object, delta zset.Batch) error {
	if err := indexWritten(st, w.cat, o, delta); err != nil {
		return err
	}
	if err := advanceWatermark(st, o, delta); err != nil {
		return err
	}
	if w.deferViews {
		if w.pending == nil {
			w.pending = map[string]zset.Batch{}
		}
		w.pending[o.name] = append(w.pending[o.name], delta...)
		return nil
	}
	return propagateTableDelta(ctx, st, w, o, delta, nil)
}

// returning binds a RETURNING list over the table's scope.
type returning struct {
	exprs []plan.Expr
	cols  []Column
}

func bindReturning(b *sql.Binder, sc *sql.Scope, o *object, list []*pg.Node) (*returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	r := &returning{}
	for _, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			for i, c := range o.cols {
				r.exprs = append(r.exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
				r.cols = append(r.cols, Column{Name: c.Name, Type: c.Type})
			}
			continue
		}
		e, err := b.Scalar(sc, rt.Val)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = sql.ColumnName(rt.Val)
		}
		r.exprs = append(r.exprs, e)
		r.cols = append(r.cols, Column{Name: name, Type: e.Type()})
	}
	return r, nil
}

func (r *returning) result(tag string, rows []zset.Row) (*Result, error) {
	if r == nil {
		return &Result{Tag: tag}, nil
	}
	res := &Result{Columns: r.cols, Tag: tag}
	for _, row := range rows {
		out := make(zset.Row, len(r.exprs))
		for i, e := range r.exprs {
			v, err := e.Eval(row)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		res.Rows = append(res.Rows, out)
	}
	return res, nil
}

func evalRow(exprs []plan.Expr, row zset.Row) (zset.Row, error) {
	out := make(zset.Row, len(exprs))
	for i, e := range exprs {
		v, err := e.Eval(row)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (s *Session) execInsert(ctx context.Context, ins *pg.InsertStmt, paramText []*string) (*Result, error) {
	if ins.WithClause != nil {
		return nil, errs.New(errs.FeatureNotSupported, "WITH in INSERT is not supported")
	}
	// An INSERT ... SELECT reads relations, so in a transaction block the
	// block's changes must reach its views first.
	readsRelations := ins.SelectStmt != nil && len(ins.SelectStmt.GetSelectStmt().GetValuesLists()) == 0
	declared := s.params()
	// A kept prepared INSERT reads nothing but its parameters.
	kept := declared.keptInsert(ins) != nil
	var res *Result
	write := func(st state.Store, w *epochWrite) (*catalog, error) {
		cat := w.cat
		o, err := targetTable(cat, ins.Relation)
		if err != nil {
			return nil, err
		}
		r, err := insertRows(ctx, st, w, o, ins, paramText, declared)
		res = r
		return nil, err
	}
	if s.txn != nil && s.txn.Block() && s.txn.w == nil {
		o, _ := targetTable(s.catalog(), ins.Relation)
		if s.deferrable(o, ins.OnConflictClause != nil, readsRelations || !kept && hasSubLink(ins.SelectStmt)) {
			return res, s.writeDeferred(o, write)
		}
	}
	return res, s.writeStatement(ctx, write, readsRelations)
}

// boundInsert is an INSERT bound to its table: what insertRows runs and
// what Session.Prepare describes.
type boundInsert struct {
	b        *sql.Binder
	nUser    int   // parameters the client supplies; later ones are EXCLUDED's
	targets  []int // the target columns' indexes
	conflict *onConflict
	ret      *returning
	// The source: VALUES rows, one expression per target column (nil for
	// DEFAULT and for a literal), or the plan of a query.
	exprRows [][]plan.Expr
	// literals holds the VALUES rows' cells, row-major, len(targets) to
	// a row: a literal's value where literal says so, else a zero Value
	// that insertRows fills. Nil without VALUES.
	literals []types.Value
	literal  []bool
	query    plan.Node
}

// bindInsert binds an INSERT into o without running anything.
func bindInsert(cat *catalog, o *object, ins *pg.InsertStmt, paramText []*string, declared *statementParams) (*boundInsert, error) {
	targets := make([]int, 0, len(o.cols))
	if len(ins.Cols) == 0 {
		for i := range o.cols {
			targets = append(targets, i)
		}
	}
	for _, c := range ins.Cols {
		rt := c.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, errs.New(errs.FeatureNotSupported, "INSERT into a subfield or array element is not supported")
		}
		i, err := o.columnIndex(rt.Name)
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			if t == i {
				return nil, errs.Newf(errs.DuplicateColumn, "column %q specified more than once", rt.Name)
			}
		}
		targets = append(targets, i)
	}
	if sel := ins.SelectStmt.GetSelectStmt(); len(ins.Cols) == 0 && sel != nil && len(sel.ValuesLists) > 0 {
		// Without a column list, VALUES fills the first columns.
		targets = targets[:min(len(targets), len(sel.ValuesLists[0].GetList().GetItems()))]
	}

	// Parameters past the client's are EXCLUDED's columns in ON CONFLICT
	// DO UPDATE: the client's are all those the statement names.
	b := newBinder(cat, paramText, declared.withSlots(insertParamRefs(ins)))
	bi := &boundInsert{b: b, nUser: len(b.ParamTypes), targets: targets}
	if oc := ins.OnConflictClause; oc != nil {
		var err error
		if bi.conflict, err = bindOnConflict(cat, b, o, aliasOf(ins.Relation), oc, bi.nUser); err != nil {
			return nil, err
		}
	}
	sc := b.TableScope(o.name, aliasOf(ins.Relation), o.cols)
	var err error
	if bi.ret, err = bindReturning(b, sc, o, ins.ReturningList); err != nil {
		return nil, err
	}

	sel := ins.SelectStmt.GetSelectStmt()
	switch {
	case ins.SelectStmt == nil:
		bi.exprRows = [][]plan.Expr{make([]plan.Expr, len(targets))}
	case sel != nil && len(sel.ValuesLists) > 0 && sel.SortClause == nil && sel.LimitCount == nil && sel.LimitOffset == nil:
		// A large VALUES list is mostly literals: their values go into
		// one slab, which insertRows carves its rows from, rather than
		// into a constant expression each.
		n := len(targets)
		cells := make([]plan.Expr, len(sel.ValuesLists)*n)
		bi.literals = make([]types.Value, len(cells))
		bi.literal = make([]bool, len(cells))
		bi.exprRows = make([][]plan.Expr, 0, len(sel.ValuesLists))
		for i, l := range sel.ValuesLists {
			items := l.GetList().Items
			if len(items) > len(targets) {
				return nil, errs.New(errs.SyntaxError, "INSERT has more expressions than target columns")
			}
			if len(items) < len(targets) {
				return nil, errs.New(errs.SyntaxError, "INSERT has more target columns than expressions")
			}
			row := cells[i*n : (i+1)*n : (i+1)*n]
			for j, it := range items {
				if it.GetSetToDefault() != nil {
					continue
				}
				col := o.cols[targets[j]]
				if v, ok, err := sql.AssignLiteral(it, col.Type, b.Zone); ok {
					if err != nil {
						return nil, err
					}
					bi.literals[i*n+j], bi.literal[i*n+j] = v, true
					continue
				}
				e, err := b.Scalar(nil, it)
				if err != nil {
					return nil, err
				}
				if row[j], err = b.Assign(e, col.Type, col.Name); err != nil {
					return nil, err
				}
			}
			bi.exprRows = append(bi.exprRows, row)
		}
	default:
		targetCols := make([]plan.Column, len(targets))
		for j, t := range targets {
			targetCols[j] = o.cols[t]
		}
		if len(ins.Cols) > 0 {
			bi.query, err = b.InsertQuery(ins.SelectStmt, targetCols)
		} else {
			var n int
			bi.query, n, err = b.InsertQueryPrefix(ins.SelectStmt, targetCols)
			bi.targets = targets[:n]
		}
		if err != nil {
			return nil, err
		}
	}
	return bi, nil
}

func insertRows(ctx context.Context, st state.Store, w *epochWrite, o *object, ins *pg.InsertStmt, paramText []*string, declared *statementParams) (*Result, error) {
	cat := w.cat
	var bi *boundInsert
	var err error
	c := declared.keptInsert(ins)
	if c != nil {
		bi, err = c.bound(cat, o, declared)
	} else {
		bi, err = bindInsert(cat, o, ins, paramText, declared)
	}
	if err != nil {
		return nil, err
	}
	b, nUser, targets, conflict, ret, exprRows := bi.b, bi.nUser, bi.targets, bi.conflict, bi.ret, bi.exprRows
	if err := bindParams(b, paramText); err != nil {
		return nil, err
	}
	var queryRows []zset.Row
	if bi.query != nil && cat.shard() != nil {
		return nil, unsupportedInShard("INSERT ... SELECT")
	}
	if bi.query != nil {
		if queryRows, err = runQuery(ctx, st, cat, bi.query); err != nil {
			return nil, err
		}
	}

	// The rows are carved from one slab: the VALUES' literals where the
	// INSERT was bound for this execution alone, a copy of them where
	// the binding is a prepared statement's, kept for the next.
	n := len(targets)
	slab := bi.literals
	if slab == nil || c != nil {
		slab = make([]types.Value, len(exprRows)*n)
		copy(slab, bi.literals)
	}
	rows := make([]zset.Row, 0, len(exprRows)+len(queryRows))
	for i, er := range exprRows {
		vals := slab[i*n : (i+1)*n : (i+1)*n]
		for j, e := range er {
			if bi.literal != nil && bi.literal[i*n+j] {
				continue
			}
			if e == nil {
				v, err := o.defaultValue(targets[j], declared.clockOf())
				if err != nil {
					return nil, err
				}
				vals[j] = v
				continue
			}
			v, err := e.Eval(nil)
			if err != nil {
				return nil, err
			}
			vals[j] = v
		}
		row, err := o.ownRow(targets, vals, declared.clockOf())
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	// The query's rows become the table's where they give every column
	// in order (epochmemory.go): a large INSERT ... SELECT holds its rows
	// once.
	for i, qr := range queryRows {
		row, err := o.ownRow(targets, qr, declared.clockOf())
		if err != nil {
			return nil, err
		}
		queryRows[i] = nil
		rows = append(rows, row)
	}
	affected, err := insertFullRows(ctx, st, w, o, rows, conflict, b, nUser)
	if err != nil {
		return nil, err
	}
	return ret.result(fmt.Sprintf("INSERT 0 %d", len(affected)), affected)
}

// fullRow builds a table row from the values of the target columns: the
// other columns get their defaults. It enforces NOT NULL.
func (o *object) fullRow(targets []int, vals []types.Value, clock sql.Clock) (zset.Row, error) {
	row := make(zset.Row, len(o.cols))
	for i := range o.cols {
		v, err := o.defaultValue(i, clock)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	for j, t := range targets {
		row[t] = vals[j]
	}
	return row, o.checkRow(row)
}

// ownRow is fullRow for vals the caller hands over: when they give every
// column in order, they become the row.
func (o *object) ownRow(targets []int, vals []types.Value, clock sql.Clock) (zset.Row, error) {
	if allColumns(targets, len(o.cols)) {
		return vals, o.checkRow(vals)
	}
	return o.fullRow(targets, vals, clock)
}

// allColumns reports whether targets are the columns 0..n-1 in order.
func allColumns(targets []int, n int) bool {
	if len(targets) != n {
		return false
	}
	for j, t := range targets {
		if t != j {
			return false
		}
	}
	return true
}

// defaultValue evaluates column i's DEFAULT, NULL when it has none; a
// DEFAULT that reads the clock (now(), ...) reads clock, the statement's
// (defaults.go).
func (o *object) defaultValue(i int, clock sql.Clock) (types.Value, error) {
	switch d := o.defaults[i].(type) {
	case nil:
		return types.Null, nil
	case *clockDefault:
		return d.at(clock)
	default:
		return d.Eval(nil)
	}
}

// insertFullRows inserts complete rows into table o: late rows are
// dropped, primary keys checked and ON CONFLICT (conflict, nil when
// none) resolved, and the change is written and carried to the views. It
// returns the rows inserted or updated.
func insertFullRows(ctx context.Context, st state.Store, w *epochWrite, o *object, rows []zset.Row, conflict *onConflict, b *sql.Binder, nUser int) ([]zset.Row, error) {
	if sh := w.cat.shard(); sh != nil {
		// Every shard has the statement's rows; each keeps its own.
		rows = sh.ownedRows(o, rows)
	}
	rows, err := admitRows(st, o, rows)
	if err != nil {
		return nil, err
	}
	var delta zset.Batch
	var affected []zset.Row
	if len(o.pk) > 0 && conflict == nil {
		return rows, insertNewKeys(ctx, st, w, o, rows)
	}
	if conflict == nil {
		for _, r := range rows {
			delta = append(delta, zset.Entry{Row: r, Weight: 1})
		}
		affected = rows
	} else if w.cat.shard() != nil && conflict.setsRoute(o) {
		return nil, unsupportedInShard("ON CONFLICT DO UPDATE of a routing column")
	} else {
		delta, affected, err = insertArbitrated(st, o, rows, conflict, b, nUser)
		if err != nil {
			return nil, err
		}
	}
	if err := writeTable(ctx, st, w, o, delta); err != nil {
		return nil, err
	}
	return affected, nil
}

// onConflict is a bound ON CONFLICT clause.
type onConflict struct {
	// arbiters are the unique keys whose conflicts the clause resolves,
	// keys every unique key of the table (arbiter.go).
	arbiters, keys []arbiter
	doUpdate       bool
	sets           setList   // new values, over the existing row
	where          plan.Expr // nil when none
}

func bindOnConflict(cat *catalog, b *sql.Binder, o *object, alias string, oc *pg.OnConflictClause, nUser int) (*onConflict, error) {
	if oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE && oc.Infer == nil {
		e := errs.New(errs.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").(*errs.Error)
		e.Hint = "For example, ON CONFLICT (column_name)."
		return nil, e
	}
	arbiters, err := inferArbiters(cat, b, o, alias, oc.Infer)
	if err != nil {
		return nil, err
	}
	c := &onConflict{arbiters: arbiters, keys: uniqueKeys(cat, o)}
	if oc.Action != pg.OnConflictAction_ONCONFLICT_UPDATE {
		return c, nil
	}
	if o.appendOnly {
		return nil, appendOnlyError(o, "update rows of")
	}
	c.doUpdate = true
	// EXCLUDED.col becomes parameter nUser+1+col, typed as the column, in
	// a copy of the clause: a prepared statement's tree is bound again at
	// its next execution, where EXCLUDED must still be EXCLUDED.
	for _, col := range o.cols {
		*b.Params = append(*b.Params, types.Null)
		b.ParamTypes = append(b.ParamTypes, col.Type)
	}
	oc = proto.Clone(oc).(*pg.OnConflictClause)
	rewriteExcluded(oc, o, nUser)
	sc := b.TableScope(o.name, alias, o.cols)
	sets, err := bindSets(b, sc, o, oc.TargetList)
	if err != nil {
		return nil, err
	}
	c.sets = sets
	if oc.WhereClause != nil {
		if c.where, err = b.Predicate(sc, oc.WhereClause, "WHERE"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// rewriteExcluded replaces references to EXCLUDED.col in an ON CONFLICT
// clause by parameter references.
func rewriteExcluded(oc *pg.OnConflictClause, o *object, nUser int) {
	pgWalk(oc, func(m any) {
		n, ok := m.(*pg.Node)
		if !ok {
			return
		}
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) != 2 || cr.Fields[0].GetString_() == nil || cr.Fields[0].GetString_().Sval != "excluded" {
			return
		}
		s := cr.Fields[1].GetString_()
		if s == nil {
			return
		}
		for i, c := range o.cols {
			if c.Name == s.Sval {
				n.Node = &pg.Node_ParamRef{ParamRef: &pg.ParamRef{Number: int32(nUser + 1 + i), Location: cr.Location}}
			}
		}
	})
}

// setList is UPDATE's bound SET list: for each assigned column, in the
// order of the table's columns (not of the SET list as written), the
// expression over the old row giving its new value. PostgreSQL evaluates
// the assignments of a row in that order, so when several fail, the first
// failing column of the table names the error.
type setList []setTarget

// setTarget is one assignment of a setList.
type setTarget struct {
	col int
	e   plan.Expr
}

// bindSets binds UPDATE's SET list (DEFAULT becomes the column's default
// expression, or NULL).
func bindSets(b *sql.Binder, sc *sql.Scope, o *object, list []*pg.Node) (setList, error) {
	sets := map[int]plan.Expr{}
	targets, err := expandSetTargets(list)
	if err != nil {
		return nil, err
	}
	for _, rt := range targets {
		if len(rt.Indirection) > 0 {
			return nil, errs.New(errs.FeatureNotSupported, "assignment to a subfield or array element is not supported")
		}
		i, err := o.columnIndex(rt.Name)
		if err != nil {
			return nil, err
		}
		if _, dup := sets[i]; dup {
			return nil, errs.Newf(errs.SyntaxError, "multiple assignments to same column %q", rt.Name)
		}
		if rt.Val.GetSetToDefault() != nil {
			if sets[i], err = o.defaultExpr(i, b.Clock); err != nil {
				return nil, err
			}
			if sets[i] == nil {
				sets[i] = &plan.Const{Val: types.Null, Typ: o.cols[i].Type}
			}
			continue
		}
		e, err := b.Scalar(sc, rt.Val)
		if err != nil {
			return nil, err
		}
		if sets[i], err = b.Assign(e, o.cols[i].Type, o.cols[i].Name); err != nil {
			return nil, err
		}
	}
	out := make(setList, 0, len(sets))
	for i := range o.cols {
		if e, ok := sets[i]; ok {
			out = append(out, setTarget{col: i, e: e})
		}
	}
	return out, nil
}

// applySets returns old with sets applied, evaluated in column order
// (setList); the first failing assignment's error is returned.
func applySets(o *object, sets setList, old zset.Row) (zset.Row, error) {
	row := append(zset.Row(nil), old...)
	for _, s := range sets {
		v, err := s.e.Eval(old)
		if err != nil {
			return nil, err
		}
		row[s.col] = v
	}
	return row, o.checkRow(row)
}

// matchRows returns the table's rows that the WHERE clause bound by
// bindWhere keeps (all rows when there is none), with their weights: a
// predicate is evaluated row by row, over only the rows under the key
// prefixes it names when it fixes the leading key column (keyscan.go),
// on the engine's workers when there are many (dmlrows.go); a plan (a
// condition with subqueries) runs as a query over st.
func matchRows(ctx context.Context, st state.Reader, cat *catalog, o *object, where plan.Expr, match plan.Node) (zset.Batch, error) {
	if match != nil {
		rows, err := runQuery(ctx, st, cat, match)
		if err != nil {
			return nil, err
		}
		out := make(zset.Batch, len(rows))
		for i, r := range rows {
			out[i] = zset.Entry{Row: r, Weight: 1}
		}
		return zset.Consolidate(out)
	}
	par := cat.parallelism()
	if where == nil {
		return readRelationOn(ctx, st, o, par)
	}
	all, err := readCandidates(ctx, st, cat, o, where, par)
	if err != nil {
		return nil, err
	}
	return keptRows(ctx, all, where, par)
}

// bindWhere binds the WHERE clause of an UPDATE or DELETE of the table rv
// names: a predicate over its rows, or with subqueries the plan of the
// rows it keeps (sql.Binder.DMLWhere).
func bindWhere(b *sql.Binder, sc *sql.Scope, rv *pg.RangeVar, n *pg.Node) (plan.Expr, plan.Node, error) {
	return b.DMLWhere(sc, rv, n)
}

// dmlTarget is the bound target of an UPDATE or DELETE: the table, the
// binder and scope its other clauses bind with, and its WHERE.
type dmlTarget struct {
	o     *object
	b     *sql.Binder
	sc    *sql.Scope
	where plan.Expr
	match plan.Node
}

func bindTarget(cat *catalog, rv *pg.RangeVar, whereClause *pg.Node, paramText []*string, declared *statementParams) (*dmlTarget, error) {
	o, err := targetTable(cat, rv)
	if err != nil {
		return nil, err
	}
	t := &dmlTarget{o: o, b: newBinder(cat, paramText, declared)}
	t.sc = t.b.TableScope(o.name, aliasOf(rv), o.cols)
	if t.where, t.match, err = bindWhere(t.b, t.sc, rv, whereClause); err != nil {
		return nil, err
	}
	return t, nil
}

// hasSubLink reports whether an expression holds a subquery, which may
// read materialized views.
func hasSubLink(n *pg.Node) bool {
	found := false
	pgWalk(n, func(m any) {
		if _, ok := m.(*pg.SubLink); ok {
			found = true
		}
	})
	return found
}

func (s *Session) execUpdate(ctx context.Context, up *pg.UpdateStmt, paramText []*string) (*Result, error) {
	if up.WithClause != nil || len(up.FromClause) > 0 {
		return nil, errs.New(errs.FeatureNotSupported, "UPDATE with WITH or FROM is not supported")
	}
	var res *Result
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		cat := w.cat
		if cat.shard() != nil && (hasSubLink(up.WhereClause) || setsHaveSubLinks(up.TargetList)) {
			return nil, unsupportedInShard("UPDATE with a subquery")
		}
		t, err := bindTarget(cat, up.Relation, up.WhereClause, paramText, s.params())
		if err != nil {
			return nil, err
		}
		if t.o.appendOnly {
			return nil, appendOnlyError(t.o, "update")
		}
		o, b, sc, where, match := t.o, t.b, t.sc, t.where, t.match
		sets, setMatch, err := bindUpdateSets(b, sc, o, up)
		if err != nil {
			return nil, err
		}
		if setMatch != nil {
			where, match = nil, setMatch
		}
		ret, err := bindReturning(b, sc, o, up.ReturningList)
		if err != nil {
			return nil, err
		}
		if err := bindParams(b, paramText); err != nil {
			return nil, err
		}
		matched, err := matchRows(ctx, st, cat, o, where, match)
		if err != nil {
			return nil, err
		}
		news, err := s.updatedRowsAt(ctx, o, sets, matched, b.UsedRandom, cat.parallelism())
		if err != nil {
			return nil, err
		}
		if setMatch != nil {
			trimUpdated(matched, news, len(o.cols))
		}
		var delta zset.Batch
		var updated []zset.Row
		for i, e := range matched {
			nr := news[i]
			delta = append(delta, zset.Entry{Row: e.Row, Weight: -e.Weight}, zset.Entry{Row: nr, Weight: e.Weight})
			for i := int64(0); i < e.Weight; i++ {
				updated = append(updated, nr)
			}
		}
		kept := updated
		if sh := cat.shard(); sh != nil {
			// New rows of other shards' buckets go there, whose primary
			// keys are checked there (shard.go).
			delta, kept = w.keepOwned(sh, o, matched, news)
		}
		if len(o.pk) > 0 {
			if err := checkKeysAfter(st, o, matched, kept); err != nil {
				return nil, err
			}
		}
		if err := writeTable(ctx, st, w, o, delta); err != nil {
			return nil, err
		}
		res, err = ret.result(fmt.Sprintf("UPDATE %d", len(updated)), updated)
		return nil, err
	}, hasSubLink(up.WhereClause) || setsHaveSubLinks(up.TargetList))
	return res, err
}

// checkKeysAfter verifies that replacing the removed rows by the added
// ones leaves every primary key unique.
func checkKeysAfter(st state.Reader, o *object, removed zset.Batch, added []zset.Row) error {
	keyOf := o.keyOf()
	prefix := o.rowsPrefix()
	gone := map[string]bool{}
	for _, e := range removed {
		gone[string(keyOf(nil, prefix, e.Row))] = true
	}
	seen := map[string]bool{}
	for _, r := range added {
		k := keyOf(nil, prefix, r)
		if seen[string(k)] {
			return o.uniqueViolation(r)
		}
		seen[string(k)] = true
		if gone[string(k)] {
			continue
		}
		_, found, err := st.Get(k)
		if err != nil {
			return err
		}
		if found {
			return o.uniqueViolation(r)
		}
	}
	return nil
}

func (s *Session) execDelete(ctx context.Context, del *pg.DeleteStmt, paramText []*string) (*Result, error) {
	if del.WithClause != nil || len(del.UsingClause) > 0 {
		return nil, errs.New(errs.FeatureNotSupported, "DELETE with WITH or USING is not supported")
	}
	var res *Result
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		cat := w.cat
		if cat.shard() != nil && hasSubLink(del.WhereClause) {
			return nil, unsupportedInShard("DELETE with a subquery")
		}
		t, err := bindTarget(cat, del.Relation, del.WhereClause, paramText, s.params())
		if err != nil {
			return nil, err
		}
		if t.o.appendOnly {
			return nil, appendOnlyError(t.o, "delete from")
		}
		o, b, sc, where, match := t.o, t.b, t.sc, t.where, t.match
		ret, err := bindReturning(b, sc, o, del.ReturningList)
		if err != nil {
			return nil, err
		}
		if err := bindParams(b, paramText); err != nil {
			return nil, err
		}
		matched, err := matchRows(ctx, st, cat, o, where, match)
		if err != nil {
			return nil, err
		}
		var delta zset.Batch
		var deleted []zset.Row
		for _, e := range matched {
			delta = append(delta, zset.Entry{Row: e.Row, Weight: -e.Weight})
			for i := int64(0); i < e.Weight; i++ {
				deleted = append(deleted, e.Row)
			}
		}
		if err := writeTable(ctx, st, w, o, delta); err != nil {
			return nil, err
		}
		res, err = ret.result(fmt.Sprintf("DELETE %d", len(deleted)), deleted)
		return nil, err
	}, hasSubLink(del.WhereClause))
	return res, err
}
