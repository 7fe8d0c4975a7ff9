package sql

import (
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A correlated subquery that cannot be decorrelated into a join (its
// correlation is not inner = outer under an aggregate, or it refers to the
// query around it in a FROM function or an expression the joins cannot
// carry) is evaluated once per row of the query around it instead: the
// subquery is bound as a query of its own, each reference to the query
// around it a parameter, and the expression that replaces it runs that
// query with the row's values as the parameters.
//
// Only a session's ad-hoc queries may do this (their catalog implements
// SubqueryRunner): a materialized view must be maintained by deltas, and
// a per-row query has none. Catalog queries of clients (psql's \d) are
// the use: their relations are small.

// SubqueryRunner runs a bound plan over the relations a query reads. A
// SystemCatalog in a session that implements it lets ad-hoc queries
// evaluate correlated subqueries per row.
type SubqueryRunner interface {
	RunSubquery(p plan.Node) ([]zset.Row, error)
}

// applyScope is the subquery being bound for per-row evaluation: the
// outer scope its references to the query around it resolve in, and
// those references' expressions (over that query's row), in parameter
// order. parent is the per-row subquery it is nested in, if any: the
// query around that one is further out, and a reference to it is a
// parameter of that subquery, set while this one runs.
type applyScope struct {
	outer  *outerScope
	exprs  []plan.Expr
	values *[]types.Value
	parent *applyScope
}

// applyReference returns the parameter standing for e, a column of the
// query depth levels out, when that query is the one around a subquery
// being bound for per-row evaluation (at any depth inside it); ok is
// false otherwise.
func (ec *exprCtx) applyReference(e plan.Expr, depth int) (plan.Expr, bool) {
	o := ec.st.outer
	for i := 1; i < depth && o != nil; i++ {
		o = o.parent
	}
	for a := ec.st.apply; a != nil; a = a.parent {
		if o == a.outer {
			a.exprs = append(a.exprs, e)
			return &plan.Param{N: len(a.exprs), Typ: e.Type(), Values: a.values}, true
		}
	}
	return nil, false
}

// applySubLink binds a scalar or EXISTS subquery for per-row evaluation;
// ok is false when the catalog has no runner or the subquery is of
// another kind.
func (ec *exprCtx) applySubLink(sl *pg.SubLink, kind linkKind) (plan.Expr, bool, error) {
	runner, _ := ec.st.b.Cat.(SubqueryRunner)
	if runner == nil || ec.st.systemCatalog() == nil || (kind != linkScalar && kind != linkExists) {
		return nil, false, nil
	}
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, false, nil
	}
	st := ec.st
	st.b.UsedSession = true
	savedOuter, savedApply := st.outer, st.apply
	a := &applyScope{outer: &outerScope{sc: ec.sc, parent: savedOuter}, values: new([]types.Value), parent: savedApply}
	st.outer, st.apply = a.outer, a
	node, err := st.query(sel, queryOpts{resolveUnknowns: true}, ec.env)
	st.outer, st.apply = savedOuter, savedApply
	if err != nil {
		return nil, true, err
	}
	cols := node.Columns()
	typ := types.Of(types.Bool)
	if kind == linkScalar {
		if len(cols) != 1 {
			return nil, true, posErr(errs.New(errs.SyntaxError, "subquery must return only one column"), sl.Location)
		}
		typ = cols[0].Type
	}
	var mu sync.Mutex // the parameters are shared by every evaluation
	fn := func(args []types.Value) (types.Value, error) {
		mu.Lock()
		defer mu.Unlock()
		*a.values = args
		rows, err := runner.RunSubquery(node)
		if err != nil {
			return types.Null, err
		}
		if kind == linkExists {
			return types.MakeBool(len(rows) > 0), nil
		}
		switch len(rows) {
		case 0:
			return types.Null, nil
		case 1:
			return rows[0][0], nil
		}
		return types.Null, errs.New(errs.CardinalityViolation, "more than one row returned by a subquery used as an expression")
	}
	return &plan.Func{Name: "subquery", Args: a.exprs, Typ: typ, NonStrict: true, Fn: fn}, true, nil
}
