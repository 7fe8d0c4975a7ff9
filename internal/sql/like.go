package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// like binds x [NOT] LIKE/ILIKE pattern [ESCAPE e]: the operators ~~, !~~,
// ~~* and !~~*, as PostgreSQL's parser writes them. An ESCAPE clause
// arrives as the pattern like_escape(pattern, e), a function of the
// catalog that rewrites the pattern to backslash escapes.
func (ec *exprCtx) like(a *pg.A_Expr) (plan.Expr, error) {
	var op string
	for _, n := range a.Name {
		op = n.GetString_().GetSval()
	}
	switch op {
	case "~~", "!~~", "~~*", "!~~*":
	default:
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "operator does not exist: %s", op), a.Location)
	}
	l, err := ec.bind(a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := ec.bind(a.Rexpr)
	if err != nil {
		return nil, err
	}
	return ec.binaryOp(op, l, r, a.Location)
}

// similar binds x [NOT] SIMILAR TO pattern [ESCAPE e]: PostgreSQL's parser
// writes it as x ~ similar_to_escape(pattern [, e]) (!~ for NOT), the
// function rewriting the SQL pattern to a regular expression.
func (ec *exprCtx) similar(a *pg.A_Expr) (plan.Expr, error) {
	var op string
	for _, n := range a.Name {
		op = n.GetString_().GetSval()
	}
	if op != "~" && op != "!~" {
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "operator does not exist: %s", op), a.Location)
	}
	l, err := ec.bind(a.Lexpr)
	if err != nil {
		return nil, err
	}
	r, err := ec.bind(a.Rexpr)
	if err != nil {
		return nil, err
	}
	return ec.binaryOp(op, l, r, a.Location)
}
