package runtime

import (
	"context"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// renameStmt runs ALTER {TABLE | VIEW | MATERIALIZED VIEW} ... RENAME TO
// and ALTER TABLE ... RENAME COLUMN. The views that read the relation go
// on reading it: they know it by id and its columns by number
// (inputs.go), so only their circuits' scan names change.
func renameStmt(ctx context.Context, st state.Store, w *epochWrite, text string, r *pg.RenameStmt, notes *notices) (*catalog, *Result, error) {
	cat := w.cat
	relType := r.RenameType
	if relType == pg.ObjectType_OBJECT_COLUMN {
		relType = r.RelationType
	}
	var tag string
	var want sql.RelationKind
	switch relType {
	case pg.ObjectType_OBJECT_TABLE:
		tag, want = "ALTER TABLE", sql.Table
	case pg.ObjectType_OBJECT_VIEW:
		tag, want = "ALTER VIEW", sql.View
	case pg.ObjectType_OBJECT_MATVIEW:
		tag, want = "ALTER MATERIALIZED VIEW", sql.MaterializedView
	default:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", stmtName(&pg.Node{Node: &pg.Node_RenameStmt{RenameStmt: r}}))
	}
	res := &Result{Tag: tag}
	if r.Relation == nil {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", stmtName(&pg.Node{Node: &pg.Node_RenameStmt{RenameStmt: r}}))
	}
	o, skip, err := findRelation(cat, r.Relation, r.MissingOk)
	if err != nil || o == nil {
		if skip != "" {
			notes.add("00000", skip)
		}
		return nil, res, err
	}
	// ALTER TABLE renames any relation, as in PostgreSQL; ALTER VIEW and
	// ALTER MATERIALIZED VIEW only their own kind.
	if want != sql.Table && o.kind != want {
		return nil, nil, errs.Newf(errs.WrongObjectType, "%q is not a %s", o.name, kindWord(want))
	}
	if c := connectorNaming(cat, o.name); c != "" {
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "cannot rename %s %s: %s names it; drop it first", o.kindName(), o.name, c)
	}
	nc := cat.clone()
	if err := imageDependents(cat, nc, o); err != nil {
		return nil, nil, err
	}
	if r.RenameType == pg.ObjectType_OBJECT_COLUMN {
		if o.kind != sql.Table {
			return nil, nil, errs.Newf(errs.FeatureNotSupported, "renaming a column of %s %s is not supported", o.kindName(), o.name)
		}
		i := o.colIndex(r.Subname)
		if i < 0 {
			return nil, nil, errs.Newf(errs.UndefinedColumn, "column %q does not exist", r.Subname)
		}
		if o.colIndex(r.Newname) >= 0 {
			return nil, nil, errs.Newf(errs.DuplicateColumn, "column %q of relation %q already exists", r.Newname, o.name)
		}
		t := copyTable(o)
		t.cols[i].Name = r.Newname
		t.alters = append(t.alters, text)
		nc.byName[o.name] = t
		return nc, res, nil
	}
	newKey := cat.renamedKey(o.name, r.Newname)
	if nc.lookup(newKey) != nil || nc.indexes[newKey] != nil {
		return nil, nil, errs.Newf(errs.DuplicateTable, "relation %q already exists", r.Newname)
	}
	var n *object
	if o.kind == sql.Table {
		n = copyTable(o)
		n.alters = append(n.alters, text)
	} else {
		c := *nc.byName[o.name]
		n = &c
	}
	n.name = newKey
	delete(nc.byName, o.name)
	nc.byName[n.name] = n
	renameInReaders(nc, o, n.name)
	if err := refreshViews(ctx, st, w, cat, nc, o.id, nil); err != nil {
		return nil, nil, err
	}
	return nc, res, nil
}

// connectorNaming returns the source or sink that names relation name,
// as "source s" or "sink s"; empty when none does.
func connectorNaming(cat *catalog, name string) string {
	var names []string
	for n := range cat.connectors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		sp := cat.connectors[n]
		if sp.Target == name || slices.Contains(sp.Tables, name) || (!sp.Sink && sp.AllTables) {
			if sp.Sink {
				return "sink " + n
			}
			return "source " + n
		}
	}
	return ""
}

// renamedTo gives the object of rec, just replayed into next, the name
// its record has (an ALTER ... RENAME since its CREATE).
func renamedTo(next *catalog, rec catalogRecord, err error) *catalog {
	if err != nil {
		return next
	}
	o := next.byID(rec.ID)
	if o == nil || o.name == rec.Name {
		return next
	}
	delete(next.byName, o.name)
	o.name = rec.Name
	next.byName[o.name] = o
	return next
}

// inDependencyOrder orders catalog records, given in id order, so that
// every view comes after the relations its inputs name: a view replaced
// by CREATE OR REPLACE keeps its id and may read relations created after
// it.
func inDependencyOrder(recs []catalogRecord) []catalogRecord {
	done := map[uint64]bool{}
	out := make([]catalogRecord, 0, len(recs))
	pending := recs
	for len(pending) > 0 {
		var next []catalogRecord
		for _, rec := range pending {
			ready := true
			for _, img := range rec.Inputs {
				if img.ID != rec.ID && !done[img.ID] && hasRecord(recs, img.ID) {
					ready = false
				}
			}
			if ready {
				done[rec.ID] = true
				out = append(out, rec)
			} else {
				next = append(next, rec)
			}
		}
		if len(next) == len(pending) {
			// A cycle cannot be written; replay the rest in id order and
			// let the replay report what it cannot resolve.
			return append(out, next...)
		}
		pending = next
	}
	return out
}

func hasRecord(recs []catalogRecord, id uint64) bool {
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// replaceOption marks the parse tree of CREATE OR REPLACE MATERIALIZED
// VIEW, which PostgreSQL's grammar does not have (parse).
const replaceOption = "rockstream.or_replace"

// takeReplace removes the OR REPLACE mark from cs and reports whether it
// was there.
func takeReplace(cs *pg.CreateTableAsStmt) bool {
	if cs.Into == nil {
		return false
	}
	for i, o := range cs.Into.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == replaceOption {
			cs.Into.Options = slices.Delete(cs.Into.Options, i, i+1)
			return true
		}
	}
	return false
}

// createOrReplaceView runs CREATE [OR REPLACE] VIEW. Replacing keeps the
// view's id; as in PostgreSQL, the new query must return the old columns
// (names and types, in order) and may add columns after them. The
// materialized views that read it are recomputed (refreshViews).
func createOrReplaceView(ctx context.Context, st state.Store, w *epochWrite, text string, vs *pg.ViewStmt) (*catalog, *Result, error) {
	cat := w.cat
	old := cat.resolveRV(vs.View)
	if !vs.Replace || old == nil || old.system != nil {
		return createView(st, cat, text, vs)
	}
	if old.kind != sql.View {
		return nil, nil, errs.Newf(errs.WrongObjectType, "%q is not a view", old.name)
	}
	base := cat.clone()
	delete(base.byName, old.name)
	next, res, err := createView(st, base, text, vs)
	if err != nil {
		return nil, nil, err
	}
	n := next.byName[old.name]
	if err := checkViewColumns(old, n); err != nil {
		return nil, nil, err
	}
	if dependsOn(n, old.id) {
		return nil, nil, errs.Newf(errs.InvalidObjectDef, "infinite recursion detected in rules for relation %q", old.name)
	}
	n.id = old.id
	next.nextID = cat.nextID
	next.revision = cat.revision + 1
	if err := refreshViews(ctx, st, w, cat, next, n.id, nil); err != nil {
		return nil, nil, err
	}
	return next, res, nil
}

// dependsOn reports whether view v's inputs name the relation id.
func dependsOn(v *object, id uint64) bool {
	for _, img := range v.inputs {
		if img.ID == id {
			return true
		}
	}
	return false
}

// checkViewColumns is PostgreSQL's check of a replaced view's columns.
func checkViewColumns(old, n *object) error {
	if len(n.cols) < len(old.cols) {
		return errs.New(errs.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, c := range old.cols {
		nc := n.cols[i]
		if nc.Name != c.Name {
			e := errs.Newf(errs.InvalidTableDefinition, "cannot change name of view column %q to %q", c.Name, nc.Name).(*errs.Error)
			e.Hint = "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."
			return e
		}
		if nc.Type != c.Type {
			return errs.Newf(errs.InvalidTableDefinition, "cannot change data type of view column %q from %s to %s", c.Name, c.Type, nc.Type)
		}
	}
	return nil
}

// replaceMatView runs CREATE OR REPLACE MATERIALIZED VIEW m, a RockStream
// extension: m keeps its id and its history (AS OF EPOCH before the
// replacement reads the old definition's contents), is computed by the
// new definition, and its change in this epoch is the difference. The
// operators the new circuit shares with the old keep their state and are
// not recomputed (replace_reuse.go); the rest start from no state. While
// views read m, the new definition must keep m's columns as CREATE OR
// REPLACE VIEW does (names and types, in order; more may follow).
func replaceMatView(ctx context.Context, st state.Store, w *epochWrite, text string, cs *pg.CreateTableAsStmt, recursionLimit int, zone types.Zone) (*catalog, *Result, error) {
	cat := w.cat
	old, n, next, base, err := bindReplacement(ctx, st, w, text, cs, recursionLimit, zone)
	if err != nil {
		return nil, nil, err
	}
	if old == nil {
		return createMatView(ctx, st, w, text, cs, false, recursionLimit, zone)
	}
	// With the same columns the view keeps its history: AS OF EPOCH
	// before the replacement reads the old definition's contents. With
	// other columns the old history does not fit them: it is dropped and
	// the view's history starts at this epoch.
	sameCols := typesEqual(old.cols, n.cols)
	if sameCols {
		n.created = old.created
	}
	next.nextID = cat.nextID
	next.revision = cat.revision + 1
	prev, err := readRelation(ctx, st, old)
	if err != nil {
		return nil, nil, err
	}
	reuse := planReplaceReuse(cat, base, old, n)
	drops := [][]byte{old.rowsPrefix()}
	if !sameCols {
		drops = append(drops, relPrefix(nsChangeLog, old.id))
		prev = nil
	}
	for _, p := range drops {
		if err := deletePrefix(st, p); err != nil {
			return nil, nil, err
		}
	}
	if err := reuse.keepState(st, old.id); err != nil {
		return nil, nil, err
	}
	fresh, err := backfillReusing(ctx, st, base, n, reuse)
	if err != nil {
		return nil, nil, viewError(n, err)
	}
	if err := applyDelta(st, n.rowsPrefix(), fresh, n.keyOf()); err != nil {
		return nil, nil, err
	}
	if err := setViewRows(st, n.id, fresh); err != nil {
		return nil, nil, err
	}
	delta := slices.Clone(fresh)
	for _, e := range prev {
		delta = append(delta, zset.Entry{Row: e.Row, Weight: -e.Weight})
	}
	if delta, err = zset.Consolidate(delta); err != nil {
		return nil, nil, err
	}
	if err := logChanges(st, w, n, delta); err != nil {
		return nil, nil, err
	}
	if err := refreshViews(ctx, st, w, cat, next, n.id, map[string]zset.Batch{n.name: delta}); err != nil {
		return nil, nil, err
	}
	var rows int64
	for _, e := range fresh {
		rows += e.Weight
	}
	return next, &Result{Tag: fmt.Sprintf("SELECT %d", rows), note: reuse.note(n.name)}, nil
}

// bindReplacement binds and builds the new definition of the materialized
// view CREATE OR REPLACE MATERIALIZED VIEW cs replaces, and checks it: it
// returns the view old as the catalog holds it, n as the new definition
// makes it (the same id), next the catalog holding n in old's place and
// base the catalog without old that n was bound in. old is nil when no
// such view exists (the statement creates one). Nothing is written.
func bindReplacement(ctx context.Context, st state.Store, w *epochWrite, text string, cs *pg.CreateTableAsStmt, recursionLimit int, zone types.Zone) (old, n *object, next, base *catalog, err error) {
	cat := w.cat
	old = cat.resolveRV(cs.Into.Rel)
	if old == nil || old.system != nil {
		return nil, nil, nil, nil, nil
	}
	if old.kind != sql.MaterializedView {
		return nil, nil, nil, nil, errs.Newf(errs.WrongObjectType, "%q is not a materialized view", old.name)
	}
	if cs.IfNotExists {
		return nil, nil, nil, nil, errs.New(errs.SyntaxError, "CREATE OR REPLACE and IF NOT EXISTS cannot be used together")
	}
	base = cat.clone()
	delete(base.byName, old.name)
	// The same id, so the same state prefixes.
	base.nextID = old.id
	bw := &epochWrite{epoch: w.epoch, ov: w.ov, cat: base, logSeq: w.logSeq, now: w.epochTime}
	// Recovering: the definition is bound and built, nothing is written.
	if next, _, err = createMatView(ctx, st, bw, text, cs, true, recursionLimit, zone); err != nil {
		return nil, nil, nil, nil, err
	}
	n = next.byName[old.name]
	if dependsOn(n, old.id) {
		return nil, nil, nil, nil, errs.Newf(errs.InvalidObjectDef, "infinite recursion detected in rules for relation %q", old.name)
	}
	if len(transitiveDependents(cat, old)) > 0 {
		// What CREATE OR REPLACE VIEW demands of every view: the old
		// columns kept, in order, with their names and types; new ones
		// may follow. Without readers the columns are free.
		if err := checkViewColumns(old, n); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return old, n, next, base, nil
}

// markReplace marks a CREATE MATERIALIZED VIEW parsed from CREATE OR
// REPLACE MATERIALIZED VIEW.
func markReplace(n *pg.Node) {
	if cs := n.GetCreateTableAsStmt(); cs != nil && cs.Into != nil && cs.Objtype == pg.ObjectType_OBJECT_MATVIEW {
		cs.Into.Options = append(cs.Into.Options, pg.MakeSimpleDefElemNode(replaceOption, nil, 0))
	}
}

// hasReplace reports whether cs carries the OR REPLACE mark.
func hasReplace(cs *pg.CreateTableAsStmt) bool {
	if cs.Into == nil {
		return false
	}
	for _, o := range cs.Into.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == replaceOption {
			return true
		}
	}
	return false
}

// renameInReaders gives the readers of o in nc the relation's new name
// among the names their definitions name, as observability shows them.
func renameInReaders(nc *catalog, o *object, newName string) {
	for name, v := range nc.byName {
		if i := slices.Index(v.deps, o.name); i >= 0 && v.readsRelation(o.id, o.name) {
			c := *v
			c.deps = slices.Clone(v.deps)
			c.deps[i] = newName
			nc.byName[name] = &c
		}
	}
}
