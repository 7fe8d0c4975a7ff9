package runtime

import (
	"context"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// explainIncremental shows the circuit that maintains a materialized view,
// or that would maintain a view defined by a query, one operator per row.
func (s *Session) explainIncremental(ctx context.Context, st ext.Statement) (*Result, error) {
	if st.Estimate {
		return s.explainEstimate(ctx, st)
	}
	_, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
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
