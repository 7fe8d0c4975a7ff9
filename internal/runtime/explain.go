package runtime

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// explainIncremental shows the circuit that maintains a materialized view,
// or that would maintain a view defined by a query, one operator per row.
func (s *Session) explainIncremental(ctx context.Context, st ext.Statement) (*Result, error) {
	if st.Estimate {
		return s.explainEstimate(ctx, st)
	}
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if text, ok := ext.OrReplaceMatView(st.Query); ok && st.Name == "" {
		return s.explainReplace(ctx, r, cat, text)
	}
	var c *diff.Circuit
	switch {
	case st.Name != "":
		o := s.resolveIn(cat, st.Name)
		switch {
		case o == nil:
			return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", st.Name)
		case o.kind == sql.Table:
			return nil, errs.Newf(errs.WrongObjectType, "%q is a table: EXPLAIN INCREMENTAL takes a view or a query", st.Name)
		case o.kind == sql.MaterializedView:
			c = o.circuit
		default:
			var err error
			if c, err = explainQuery(cat, o.query, 0, s.recursionLimit(), s.Zone()); err != nil {
				return nil, err
			}
		}
	default:
		tree, err := pgparse.Parse(st.Query)
		if err != nil {
			return nil, errs.WithPosition(parseError(err), 0)
		}
		if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
			return nil, errs.New(errs.SyntaxError, "EXPLAIN INCREMENTAL takes a view name or one SELECT")
		}
		if c, err = explainQuery(cat, tree.Stmts[0].Stmt, st.QueryOffset, s.recursionLimit(), s.Zone()); err != nil {
			return nil, err
		}
	}
	res := &Result{Columns: []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}}
	for _, line := range strings.Split(strings.TrimRight(displayExplain(c.Explain()), "\n"), "\n") {
		res.Rows = append(res.Rows, zset.Row{types.MakeText(line)})
	}
	if zone := explainedZone(cat, st.Name); zone != "" {
		res.Rows = append(res.Rows, zset.Row{types.MakeText("Time zone: " + zone)})
	}
	res.Tag = "EXPLAIN"
	return res, nil
}

func explainQuery(cat *catalog, q *pg.Node, offset, recursionLimit int, zone types.Zone) (*diff.Circuit, error) {
	return buildQueryWith(sql.Binder{Cat: cat, Zone: zone, TemporalFilters: true}, q, offset, recursionLimit, []byte{nsQuery}, viewLookups(cat))
}

// buildQueryAt builds the circuit of a view defined by q, its state under
// prefix.
func buildQueryAt(cat *catalog, q *pg.Node, offset, recursionLimit int, prefix []byte, zone types.Zone) (*diff.Circuit, error) {
	return buildQueryWith(sql.Binder{Cat: cat, Zone: zone}, q, offset, recursionLimit, prefix, viewLookups(cat))
}

// buildQueryWith is buildQueryAt binding with b, reading by key the
// relations lookups allows (as a view's circuit does).
func buildQueryWith(b sql.Binder, q *pg.Node, offset, recursionLimit int, prefix []byte, lookups diff.Lookups) (*diff.Circuit, error) {
	p, err := b.Query(q)
	if err == nil {
		limitRecursion(p, recursionLimit)
	}
	if err != nil {
		var e *errs.Error
		if pos := errPosition(err, &e); pos > 0 {
			return nil, &errs.Error{Code: e.Code, SQLState: e.SQLState, Message: e.Message, Position: pos + offset}
		}
		return nil, err
	}
	return diff.BuildView(p, prefix, lookups)
}

// explainPlain answers plain EXPLAIN of a SELECT with the scans the query
// makes, one line each: the key ranges it reads and the conditions that
// bound them (keyrange.go), or that it reads the whole relation.
func (s *Session) explainPlain(ctx context.Context, n *pg.ExplainStmt, paramText []*string) (*Result, error) {
	if len(n.Options) > 0 {
		return nil, errs.New(errs.FeatureNotSupported, "EXPLAIN options are not supported; plain EXPLAIN shows a SELECT's scans, EXPLAIN INCREMENTAL a view's circuit")
	}
	if n.Query.GetSelectStmt() == nil {
		return nil, errs.Newf(errs.FeatureNotSupported, "EXPLAIN of %s is not supported; EXPLAIN shows a SELECT's scans", stmtName(n.Query))
	}
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	cat = cat.withSession(ctx, s.sessionInfo(), r)
	b := newBinder(cat, paramText, s.params())
	p, err := b.Query(n.Query)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}, Tag: "EXPLAIN"}
	for _, line := range explainScans(cat, p) {
		res.Rows = append(res.Rows, zset.Row{types.MakeText(line)})
	}
	return res, nil
}

// explainScans describes each scan of p, as the query reads it
// (chooseAccess): "Seq Scan on t", "Index Scan using t_b_idx on t" or
// "Key Range Scan on v" with the conditions that bound what is read,
// and the lookups of index lookup joins (indexjoin.go).
func explainScans(cat *catalog, p plan.Node) []string {
	var lines []string
	uses := scanUses(p)
	lookups := findLookupJoins(cat, p, uses)
	walkScans(p, func(scan *plan.Scan, preds []plan.Expr) {
		o := cat.lookup(scan.Relation)
		if o == nil {
			lines = append(lines, "Seq Scan on "+scan.Relation)
			return
		}
		if lj, ok := lookups[scan.Relation]; ok {
			lines = append(lines, explainLookup(cat, o, lj)...)
			return
		}
		lines = append(lines, explainAccess(o, chooseAccess(cat, o, uses[scan.Relation], true), preds)...)
	})
	if len(lines) == 0 {
		lines = append(lines, "no stored relation is read")
	}
	return lines
}

// explainReplace is EXPLAIN INCREMENTAL CREATE OR REPLACE MATERIALIZED
// VIEW: the new query's circuit with, on each stateful operator, whether
// the replacement would keep its state (reuse=kept; reuse=kept, read when
// the backfill reads its contents) or compute it again (reuse=backfill),
// and a last line counting them. Nothing is replaced.
func (s *Session) explainReplace(ctx context.Context, r state.Reader, cat *catalog, text string) (*Result, error) {
	tree, err := pgparse.Parse(text)
	if err != nil {
		return nil, errs.WithPosition(parseError(err), 0)
	}
	var cs *pg.CreateTableAsStmt
	if len(tree.Stmts) == 1 {
		cs = tree.Stmts[0].Stmt.GetCreateTableAsStmt()
	}
	if cs == nil || cs.Objtype != pg.ObjectType_OBJECT_MATVIEW || cs.Into == nil {
		return nil, errs.New(errs.SyntaxError, "EXPLAIN INCREMENTAL takes a view name, one SELECT or one CREATE OR REPLACE MATERIALIZED VIEW")
	}
	role := s.currentRole()
	pathed := cat.withPath(cat.usablePath(r, cat.pathFor(s.Setting("search_path"), role), role))
	w := &epochWrite{cat: pathed}
	old, n, _, base, err := bindReplacement(ctx, nil, w, text, cs, s.recursionLimit(), s.Zone())
	if err != nil {
		return nil, err
	}
	var reuse replaceReuse
	if old == nil {
		// Nothing to replace: the statement would create the view.
		next, _, err := createMatView(ctx, nil, w, text, cs, true, s.recursionLimit(), s.Zone())
		if err != nil {
			return nil, err
		}
		name, _ := checkNewName(pathed, cs.Into.Rel)
		if n = next.byName[name]; n == nil {
			return nil, errs.Newf(errs.Internal, "internal error: materialized view %q not built", name)
		}
		reuse.stateful = len(n.circuit.StatefulOperators())
	} else {
		reuse = planReplaceReuse(pathed, base, old, n)
	}
	kept, seeds := map[int]bool{}, map[int]bool{}
	if reuse.plan != nil {
		for _, id := range reuse.plan.Kept {
			kept[id] = true
		}
		for _, id := range reuse.plan.Seeds {
			seeds[id] = true
		}
	}
	stateful := map[int]bool{}
	for _, id := range n.circuit.StatefulOperators() {
		stateful[id] = true
	}
	note := func(id int) string {
		switch {
		case !stateful[id]:
			return ""
		case seeds[id]:
			return "reuse=kept, read"
		case kept[id]:
			return "reuse=kept"
		}
		return "reuse=backfill"
	}
	res := &Result{Columns: []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}, Tag: "EXPLAIN"}
	for _, line := range strings.Split(strings.TrimRight(displayExplain(n.circuit.ExplainWith(note)), "\n"), "\n") {
		res.Rows = append(res.Rows, zset.Row{types.MakeText(line)})
	}
	res.Rows = append(res.Rows, zset.Row{types.MakeText(fmt.Sprintf("Replacement: %d of %d stateful operators keep their state, %d backfilled",
		len(kept), reuse.stateful, reuse.stateful-len(kept)))})
	return res, nil
}
