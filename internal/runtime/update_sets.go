package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/zset"
)

// UPDATE's SET list beyond one column = one expression:
//
//   - SET (a, b) = (x, y) and SET (a, b) = ROW(x, y) assign the fields of
//     the row to the columns in order;
//   - SET (a, b) = (SELECT x, y ...) assigns the subquery's columns (NULLs
//     when it returns no row, an error when it returns more than one);
//   - SET a = (SELECT ...), a scalar subquery, possibly correlated.
//
// The first becomes one assignment per column. With subqueries, the
// UPDATE runs as a query over the table: SELECT t.*, <each assigned
// expression holding a subquery> FROM t WHERE <condition>, whose rows are
// the matched rows followed by their new values, bound and decorrelated
// like any query. A multiple-column subquery is split into one scalar
// subquery per column, which compute the same values: the subquery is
// deterministic.

// expandSetTargets turns the SET list into one ResTarget per column,
// spelling out multiple-column assignments.
func expandSetTargets(list []*pg.Node) ([]*pg.ResTarget, error) {
	out := make([]*pg.ResTarget, 0, len(list))
	for _, n := range list {
		rt := n.GetResTarget()
		mr := rt.GetVal().GetMultiAssignRef()
		if mr == nil {
			out = append(out, rt)
			continue
		}
		val, err := multiAssignValue(mr)
		if err != nil {
			return nil, err
		}
		cp := proto.Clone(rt).(*pg.ResTarget)
		cp.Val = val
		out = append(out, cp)
	}
	return out, nil
}

// multiAssignValue is the value one column of SET (a, b, ...) = source
// takes.
func multiAssignValue(mr *pg.MultiAssignRef) (*pg.Node, error) {
	mismatch := errs.New(errs.SyntaxError, "number of columns does not match number of values")
	i := int(mr.Colno) - 1
	if row := mr.Source.GetRowExpr(); row != nil {
		if len(row.Args) != int(mr.Ncolumns) {
			return nil, mismatch
		}
		return row.Args[i], nil
	}
	if sl := mr.Source.GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_EXPR_SUBLINK {
		sel := sl.Subselect.GetSelectStmt()
		if sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
			return nil, errs.New(errs.FeatureNotSupported, "SET (...) = (subquery) is supported for a simple SELECT only")
		}
		for _, t := range sel.TargetList {
			if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
				return nil, errs.New(errs.FeatureNotSupported, "SET (...) = (SELECT * ...) is not supported; name the columns")
			}
		}
		if len(sel.TargetList) != int(mr.Ncolumns) {
			return nil, mismatch
		}
		one := proto.Clone(sl).(*pg.SubLink)
		s := one.Subselect.GetSelectStmt()
		s.TargetList = []*pg.Node{s.TargetList[i]}
		return &pg.Node{Node: &pg.Node_SubLink{SubLink: one}}, nil
	}
	return nil, errs.New(errs.FeatureNotSupported, "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
}

// setsHaveSubLinks reports whether an UPDATE's SET list holds a subquery.
func setsHaveSubLinks(list []*pg.Node) bool {
	for _, n := range list {
		if hasSubLink(n) {
			return true
		}
	}
	return false
}

// bindUpdateSets binds an UPDATE's SET list. Without subqueries it is
// bindSets and the plan is nil. With them, it returns the query whose
// rows are the rows to update (the table's columns) followed by the
// values of the assignments holding subqueries, and assignments over
// such rows.
func bindUpdateSets(b *sql.Binder, sc *sql.Scope, o *object, up *pg.UpdateStmt) (setList, plan.Node, error) {
	if !setsHaveSubLinks(up.TargetList) {
		sets, err := bindSets(b, sc, o, up.TargetList)
		return sets, nil, err
	}
	targets, err := expandSetTargets(up.TargetList)
	if err != nil {
		return nil, nil, err
	}
	star := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{
		Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}}}}
	sel := &pg.SelectStmt{
		TargetList:  []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: star}}}},
		FromClause:  []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: up.Relation}}},
		WhereClause: up.WhereClause,
	}
	var plain []*pg.Node
	var sub []*pg.ResTarget
	for _, rt := range targets {
		if hasSubLink(rt.Val) {
			sub = append(sub, rt)
			sel.TargetList = append(sel.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: rt.Val}}})
			continue
		}
		plain = append(plain, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: rt}})
	}
	sets, err := bindSets(b, sc, o, plain)
	if err != nil {
		return nil, nil, err
	}
	q, err := b.Query(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}})
	if err != nil {
		return nil, nil, err
	}
	qcols := q.Columns()
	seen := map[int]bool{}
	for _, s := range sets {
		seen[s.col] = true
	}
	for j, rt := range sub {
		i, err := o.columnIndex(rt.Name)
		if err != nil {
			return nil, nil, err
		}
		if seen[i] {
			return nil, nil, errs.Newf(errs.SyntaxError, "multiple assignments to same column %q", rt.Name)
		}
		seen[i] = true
		k := len(o.cols) + j
		e, err := b.Assign(&plan.ColRef{Index: k, Name: qcols[k].Name, Typ: qcols[k].Type}, o.cols[i].Type, o.cols[i].Name)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, setTarget{col: i, e: e})
	}
	// Assignments run in column order (setList).
	for a := 1; a < len(sets); a++ {
		for c := a; c > 0 && sets[c].col < sets[c-1].col; c-- {
			sets[c], sets[c-1] = sets[c-1], sets[c]
		}
	}
	return sets, q, nil
}

// trimUpdated cuts the rows of an UPDATE run as a query (bindUpdateSets)
// back to the table's columns.
func trimUpdated(matched zset.Batch, news []zset.Row, width int) {
	for i := range matched {
		matched[i].Row = matched[i].Row[:width]
		news[i] = news[i][:width]
	}
}
