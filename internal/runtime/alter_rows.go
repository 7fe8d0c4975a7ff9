package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// findRelation resolves the relation an ALTER names; nil with no error
// when it is missing and missingOk (the NOTICE is then in notice).
func findRelation(cat *catalog, rv *pg.RangeVar, missingOk bool) (*object, string, error) {
	if err := cat.checkDatabase(rv); err != nil {
		return nil, "", err
	}
	name := qualifiedName(rv.Schemaname, rv.Relname)
	o := cat.resolve(name)
	if o != nil && o.system != nil {
		return nil, "", systemRelationError(o, "alter")
	}
	if o == nil {
		// As PostgreSQL words them: the NOTICE names the relation alone,
		// and a schema that does not exist is the error.
		if missingOk {
			return nil, fmt.Sprintf("relation %q does not exist, skipping", rv.Relname), nil
		}
		if sch := rv.Schemaname; sch != "" && !cat.schemaExists(sch) && !isSystemSchema(sch) {
			return nil, "", errs.Newf(errs.InvalidSchemaName, "schema %q does not exist", sch)
		}
		return nil, "", errs.Newf(errs.UndefinedTable, "relation %q does not exist", name)
	}
	return o, "", nil
}

// alterTable runs ALTER TABLE: the new definition, the rewrite of the
// stored rows, and the views that read the table, in the statement's
// epoch.
func alterTable(ctx context.Context, st state.Store, w *epochWrite, text string, at *pg.AlterTableStmt, notes *notices) (*catalog, *Result, error) {
	cat := w.cat
	if cat.shard() != nil {
		// A rewritten row may belong to another bucket, and the views'
		// refresh would step off the mesh.
		return nil, nil, unsupportedInShard("ALTER TABLE")
	}
	res := &Result{Tag: "ALTER TABLE"}
	switch at.Objtype {
	case pg.ObjectType_OBJECT_TABLE:
	case pg.ObjectType_OBJECT_VIEW:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "ALTER VIEW ... %s is not supported; only RENAME TO and SET SCHEMA are", firstCmdName(at))
	case pg.ObjectType_OBJECT_MATVIEW:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "ALTER MATERIALIZED VIEW ... %s is not supported; only RENAME TO and SET SCHEMA are", firstCmdName(at))
	default:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", stmtName(&pg.Node{Node: &pg.Node_AlterTableStmt{AlterTableStmt: at}}))
	}
	o, skip, err := findRelation(cat, at.Relation, at.MissingOk)
	if err != nil || o == nil {
		if skip != "" {
			notes.add("00000", skip)
		}
		return nil, res, err
	}
	if o.kind != sql.Table {
		cmd := at.Cmds[0].GetAlterTableCmd()
		what := "this action"
		if cmd != nil {
			what = alterCmdName(cmd.Subtype)
		}
		e := errs.Newf(errs.WrongObjectType, "ALTER action %s cannot be performed on relation %q", what, o.name).(*errs.Error)
		e.Detail = fmt.Sprintf("This operation is not supported for %ss.", o.kindName())
		return nil, nil, e
	}
	if ok, err := isConstraintAlter(at); ok || err != nil {
		if err != nil {
			return nil, nil, err
		}
		nc, err := alterConstraints(ctx, st, cat, o, at, notes)
		return nc, res, err
	}
	ch, err := alterDefinition(cat, o, at)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range ch.notices {
		code := "00000"
		if strings.Contains(n, "already exists") {
			code = "42701"
		}
		notes.add(code, n)
	}
	if c := connectorNaming(cat, o.name); c != "" && len(ch.steps) > 0 {
		// A connector maps its records onto the table's columns as they
		// were when it started.
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "cannot change the columns of table %s: %s names it; drop it first", o.name, c)
	}
	nt := ch.o
	nt.alters = append(nt.alters, text)
	nc := cat.clone()
	if err := imageDependents(cat, nc, o); err != nil {
		return nil, nil, err
	}
	nc.byName[nt.name] = nt
	if err := checkDependents(st, nc, o, ch, notes); err != nil {
		return nil, nil, err
	}
	if err := rewriteRows(ctx, st, o, ch); err != nil {
		return nil, nil, err
	}
	if err := refreshViews(ctx, st, w, cat, nc, o.id, nil); err != nil {
		return nil, nil, err
	}
	return nc, res, nil
}

func firstCmdName(at *pg.AlterTableStmt) string {
	if len(at.Cmds) > 0 {
		if cmd := at.Cmds[0].GetAlterTableCmd(); cmd != nil {
			return alterCmdName(cmd.Subtype)
		}
	}
	return "this action"
}

// replayAlter applies a stored ALTER statement to the definition of the
// table with id id while the catalog is recovered.
func replayAlter(cat *catalog, id uint64, text string) (*catalog, error) {
	tree, err := parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, errs.Newf(errs.DataCorrupted, "stored ALTER statement does not parse: %q", text)
	}
	o := cat.byID(id)
	if o == nil {
		return nil, errs.Newf(errs.DataCorrupted, "stored ALTER statement for a missing table: %q", text)
	}
	n := tree.Stmts[0].Stmt
	nc := cat.clone()
	nc.revision = cat.revision
	switch {
	case n.GetAlterTableStmt() != nil:
		ch, err := alterDefinition(cat, o, n.GetAlterTableStmt())
		if err != nil {
			return nil, err
		}
		ch.o.alters = append(ch.o.alters, text)
		nc.byName[o.name] = ch.o
	case n.GetRenameStmt() != nil:
		r := n.GetRenameStmt()
		t := copyTable(o)
		t.alters = append(t.alters, text)
		if r.RenameType == pg.ObjectType_OBJECT_COLUMN {
			i := t.colIndex(r.Subname)
			if i < 0 {
				return nil, noColumn(r.Subname, t.name)
			}
			t.cols[i].Name = r.Newname
			nc.byName[o.name] = t
		} else {
			delete(nc.byName, o.name)
			t.name = cat.renamedKey(o.name, r.Newname)
			nc.byName[t.name] = t
		}
	default:
		return nil, errs.Newf(errs.DataCorrupted, "stored ALTER statement is a %s", stmtName(n))
	}
	return nc, nil
}

// transitiveDependents returns the views that read o, directly or through
// other views, in creation order.
func transitiveDependents(cat *catalog, o *object) []*object {
	seen := map[uint64]bool{}
	var out []*object
	var walk func(x *object)
	walk = func(x *object) {
		for _, d := range cat.dependents(x.name) {
			if !seen[d.id] {
				seen[d.id] = true
				out = append(out, d)
				walk(d)
			}
		}
	}
	walk(o)
	slices.SortFunc(out, func(a, b *object) int { return cmpID(a.id, b.id) })
	return out
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// imageDependents gives the views that read o (in cat) and have no
// images yet the images of their current binding, in nc.
func imageDependents(cat, nc *catalog, o *object) error {
	for _, v := range transitiveDependents(cat, o) {
		if v.inputs != nil {
			continue
		}
		bc := viewCatalog(cat, v, nil)
		b := sql.Binder{Cat: bc, Zone: v.zone}
		if _, err := b.Query(v.query); err != nil {
			return viewError(v, err)
		}
		nv := *v
		nv.inputs = bc.images
		nc.byName[v.name] = &nv
	}
	return nil
}

// bindsAs reports whether view v's definition, bound through images in
// cat, still gives v's columns.
func bindsAs(cat *catalog, v *object, images map[string]*inputImage) bool {
	bc := viewCatalog(cat, v, images)
	bc.record = false
	b := sql.Binder{Cat: bc, Zone: v.zone}
	p, err := b.Query(v.query)
	if err != nil {
		return false
	}
	cols := p.Columns()
	if len(cols) != len(v.cols) {
		return false
	}
	for i, c := range cols {
		if c.Type != v.cols[i].Type {
			return false
		}
	}
	return true
}

// withoutColumns returns images with the columns numbered attnums of the
// table id left out.
func withoutColumns(images map[string]*inputImage, id uint64, attnums []int) map[string]*inputImage {
	out := make(map[string]*inputImage, len(images))
	for k, img := range images {
		if img.ID != id {
			out[k] = img
			continue
		}
		n := &inputImage{ID: img.ID}
		for _, c := range img.Cols {
			if !slices.Contains(attnums, c.Attnum) {
				n.Cols = append(n.Cols, c)
			}
		}
		out[k] = n
	}
	return out
}

// imagedColumns returns the attnums, of those given, that view v saw of
// table id.
func imagedColumns(v *object, id uint64, attnums []int) []int {
	var out []int
	for _, img := range v.inputs {
		if img.ID != id {
			continue
		}
		for _, c := range img.Cols {
			if slices.Contains(attnums, c.Attnum) && !slices.Contains(out, c.Attnum) {
				out = append(out, c.Attnum)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkDependents refuses, or applies, what dropping and retyping
// columns of table o does to the views that read them: a view that reads
// a dropped column is an error (2BP01) unless CASCADE drops it; one that
// reads a retyped column is an error (0A000). Views that only saw such
// columns (SELECT of some columns over a join, say) get images without
// them, and are recomputed by refreshViews.
func checkDependents(st state.Store, nc *catalog, o *object, ch *tableChange, notes *notices) error {
	if len(ch.dropped) == 0 && len(ch.retyped) == 0 {
		return nil
	}
	var blocking []string
	var cascaded []string
	for _, v := range transitiveDependents(nc, o) {
		if nc.byName[v.name] != v {
			continue // dropped by a cascade already
		}
		if ty := imagedColumns(v, o.id, ch.retyped); len(ty) > 0 {
			if !bindsAs(nc, v, withoutColumns(v.inputs, o.id, ty)) {
				e := errs.New(errs.FeatureNotSupported, "cannot alter type of a column used by a view or rule").(*errs.Error)
				e.Detail = fmt.Sprintf("rule _RETURN on %s %s depends on column %q", v.kindName(), v.name, ch.retypedNames[ty[0]])
				return e
			}
		}
		dr := imagedColumns(v, o.id, ch.dropped)
		if len(dr) == 0 {
			continue
		}
		images := withoutColumns(v.inputs, o.id, dr)
		if !bindsAs(nc, v, images) {
			if ch.cascade {
				cascaded = append(cascaded, v.kindName()+" "+v.name)
				if err := dropObject(st, nc, v, true); err != nil {
					return err
				}
				continue
			}
			for _, a := range dr {
				blocking = append(blocking, fmt.Sprintf("%s %s depends on column %s of table %s", v.kindName(), v.name, ch.droppedNames[a], o.name))
			}
			continue
		}
		nv := *v
		nv.inputs = images
		nc.byName[v.name] = &nv
	}
	if len(blocking) > 0 {
		e := errs.Newf(errs.DependentObjects, "cannot drop column %s of table %s because other objects depend on it", ch.droppedNames[ch.dropped[0]], o.name).(*errs.Error)
		e.Detail = strings.Join(blocking, "\n")
		e.Hint = "Use DROP ... CASCADE to drop the dependent objects too."
		return e
	}
	switch len(cascaded) {
	case 0:
	case 1:
		notes.add("00000", "drop cascades to "+cascaded[0])
	default:
		notes.add("00000", fmt.Sprintf("drop cascades to %d other objects", len(cascaded)))
	}
	return nil
}

// rewriteRows rewrites table o's stored rows by ch's steps into the
// layout of ch.o, and checks the NOT NULL columns ch names.
func rewriteRows(ctx context.Context, st state.Store, o *object, ch *tableChange) error {
	if len(ch.steps) == 0 && len(ch.notNull) == 0 {
		return nil
	}
	rows, err := readRelation(ctx, st, o)
	if err != nil {
		return err
	}
	nt := ch.o
	if len(ch.steps) > 0 {
		out := make(zset.Batch, len(rows))
		for i, e := range rows {
			row := e.Row
			for _, step := range ch.steps {
				next := make(zset.Row, len(step))
				for j, x := range step {
					if _, ok := x.(*clockDefault); ok {
						return errs.Newf(errs.FeatureNotSupported, "ADD COLUMN with a default that reads the clock is not supported on a table with rows")
					}
					v, err := x.Eval(row)
					if err != nil {
						return err
					}
					next[j] = v
				}
				row = next
			}
			out[i] = zset.Entry{Row: row, Weight: e.Weight}
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		rows = out
	}
	for _, name := range ch.notNull {
		i := nt.colIndex(name)
		for _, e := range rows {
			if i >= 0 && e.Row[i].IsNull() {
				return errs.Newf(errs.NotNullViolation, "column %q of relation %q contains null values", name, nt.name)
			}
		}
	}
	if len(ch.steps) == 0 {
		return nil
	}
	if len(nt.pk) > 0 {
		seen := map[string]bool{}
		var k []byte
		keyOf := nt.orderKeyOf()
		for _, e := range rows {
			k = keyOf(k, nil, e.Row)
			if seen[string(k)] {
				return duplicatedKey(nt, e.Row)
			}
			seen[string(k)] = true
		}
	}
	if err := deletePrefix(st, o.rowsPrefix()); err != nil {
		return err
	}
	if nt.storesInArrivalOrder() {
		if err := st.Delete(appendSeqKey(nt.id)); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		return appendRows(st, nt, rows)
	}
	if rows, err = zset.Consolidate(rows); err != nil {
		return err
	}
	return applyDelta(st, nt.rowsPrefix(), rows, nt.keyOf())
}

// refreshViews rebuilds the circuits of the materialized views that read
// the relation with id id, directly or not, over nc: a view whose circuit
// is the same but for the names and column positions of what it scans
// keeps its state and contents; any other is recomputed from its inputs,
// and the difference from its stored contents is its change in this
// epoch (its readers then see it as any change).
func refreshViews(ctx context.Context, st state.Store, w *epochWrite, old, nc *catalog, id uint64, deltas map[string]zset.Batch) error {
	src := nc.byID(id)
	if src == nil {
		return nil
	}
	if deltas == nil {
		deltas = map[string]zset.Batch{}
	}
	for _, v := range transitiveDependents(nc, src) {
		if v.kind != sql.MaterializedView {
			continue
		}
		nv := *v
		bc := viewCatalog(nc, v, v.inputs)
		bc.record = false
		b := sql.Binder{Cat: bc, Zone: v.zone, TemporalFilters: true}
		p, err := b.Query(v.query)
		if err != nil {
			return viewError(v, err)
		}
		limitRecursion(p, v.maxIterations)
		if nv.circuit, err = diff.BuildView(p, relPrefix(nsOpState, v.id), viewLookups(nc)); err != nil {
			return err
		}
		nc.byName[v.name] = &nv
		var out zset.Batch
		if sameCircuit(v.circuit.Explain(), nv.circuit.Explain()) && inputShapes(old, v.circuit) == inputShapes(nc, nv.circuit) {
			in, touched := circuitDeltas(nc, nv.circuit, deltas)
			if !touched {
				continue
			}
			if out, err = nv.circuit.StepParallel(ctx, st, in, nc.parallelism()); err != nil {
				return viewError(v, err)
			}
		} else {
			if out, err = recompute(ctx, st, nc, &nv); err != nil {
				return viewError(v, err)
			}
		}
		if len(out) == 0 {
			continue
		}
		if err := applyDelta(st, nv.rowsPrefix(), out, nv.keyOf()); err != nil {
			return err
		}
		if err := addViewRows(st, &nv, out); err != nil {
			return err
		}
		if err := logChanges(st, w, &nv, out); err != nil {
			return err
		}
		deltas[nv.name] = out
	}
	return nil
}

// recompute computes materialized view v again from its inputs, with its
// operator state cleared, and returns the difference from its stored
// contents.
func recompute(ctx context.Context, st state.Store, cat *catalog, v *object) (zset.Batch, error) {
	if err := deletePrefix(st, relPrefix(nsOpState, v.id)); err != nil {
		return nil, err
	}
	fresh, err := backfill(ctx, st, cat, v)
	if err != nil {
		return nil, err
	}
	old, err := readRelation(ctx, st, v)
	if err != nil {
		return nil, err
	}
	delta := slices.Clone(fresh)
	for _, e := range old {
		delta = append(delta, zset.Entry{Row: e.Row, Weight: -e.Weight})
	}
	return zset.Consolidate(delta)
}

// inputShapes describes the rows a circuit's scans take from the
// relations of cat: their column types, scan by scan.
func inputShapes(cat *catalog, c *diff.Circuit) string {
	var b strings.Builder
	for _, r := range c.Relations() {
		o, pos := cat.input(r)
		if o == nil {
			b.WriteString("?;")
			continue
		}
		if pos == nil {
			for _, col := range o.cols {
				b.WriteString(col.Type.String() + ",")
			}
		} else {
			for _, p := range pos {
				b.WriteString(o.cols[p].Type.String() + ",")
			}
		}
		b.WriteString(";")
	}
	return b.String()
}

// sameCircuit reports whether two circuits' EXPLAIN texts differ only in
// the relations their scans name.
func sameCircuit(a, b string) bool { return scanNames(a) == scanNames(b) }

func scanNames(explain string) string {
	lines := strings.Split(explain, "\n")
	for i, l := range lines {
		if j := strings.Index(l, "scan "); j >= 0 {
			if k := strings.Index(l[j:], "  state="); k >= 0 {
				lines[i] = l[:j] + "scan" + l[j+k:]
			}
		}
	}
	return strings.Join(lines, "\n")
}

// typesEqual reports whether two column lists have the same names and
// types.
func typesEqual(a, b []plan.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

// notices collects the NOTICEs a DDL statement raises once it has
// succeeded.
type notices []Notice

func (n *notices) add(sqlstate, msg string) {
	*n = append(*n, Notice{Severity: "NOTICE", SQLState: sqlstate, Message: msg})
}

// execAlter runs ALTER TABLE, ALTER ... RENAME and ALTER ... SET SCHEMA
// of a relation, and sends its notices once it has committed
// (or, in a transaction block, succeeded).
func (s *Session) execAlter(ctx context.Context, text string, n *pg.Node) (*Result, error) {
	var notes notices
	pctx := s.withProgress(ctx)
	res, err := s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
		notes = notes[:0]
		var nc *catalog
		var res *Result
		var err error
		switch {
		case n.GetAlterTableStmt() != nil:
			nc, res, err = alterTable(pctx, st, w, text, n.GetAlterTableStmt(), &notes)
		case n.GetAlterObjectSchemaStmt() != nil:
			// The relation's rows and columns stay as they are, and its
			// indexes move with it (alterRelationSchema): nothing to
			// reindex.
			return alterRelationSchema(pctx, st, w, n.GetAlterObjectSchemaStmt(), &notes)
		default:
			nc, res, err = renameStmt(pctx, st, w, text, n.GetRenameStmt(), &notes)
		}
		if err == nil && nc != nil {
			err = reindexChanged(pctx, st, w.cat, nc)
		}
		return nc, res, err
	})
	if err == nil && s.onNotice != nil {
		for _, nt := range notes {
			s.onNotice(nt)
		}
	}
	return res, err
}

// duplicatedKey is the error of a rewrite that gives two rows one primary
// key, as PostgreSQL words it when it rebuilds the key's index.
func duplicatedKey(o *object, row zset.Row) error {
	e := o.uniqueViolation(row).(*errs.Error)
	e.Message = fmt.Sprintf("could not create unique index %q", o.name+"_pkey")
	e.Detail = strings.TrimSuffix(e.Detail, " already exists.") + " is duplicated."
	return e
}
