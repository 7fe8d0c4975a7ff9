package sql

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// regexp_matches and regexp_split_to_table return sets: each is unnest of
// an array the types catalog computes (types.RegexpMatchesRows,
// types.RegexpSplitRows), in the select list and in FROM like unnest
// (unnest.go). A row of regexp_matches is a text[]; as arrays of arrays do
// not exist, its array holds each row's text and the element is read back
// as text[] (rowArray).

// regexpRowsName returns the catalog name of the array of rows of the
// set-returning regular-expression function name, or "".
func regexpRowsName(name string) string {
	switch name {
	case "regexp_matches":
		return types.RegexpMatchesRows
	case "regexp_split_to_table":
		return types.RegexpSplitRows
	}
	return ""
}

// regexpRows binds the array of rows of regexp_matches or
// regexp_split_to_table over bound arguments.
func (ec *exprCtx) regexpRows(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	e, _, err := ec.catalogFunc(display, regexpRowsName(name), args, loc)
	if err != nil {
		return nil, err
	}
	if f, ok := e.(*plan.Func); ok {
		f.Name = name
	}
	return e, nil
}

// regexpSRFCall binds regexp_matches or regexp_split_to_table in a select
// list.
func (ec *exprCtx) regexpSRFCall(display, name string, args []plan.Expr, loc int32) (plan.Expr, error) {
	rows, err := ec.regexpRows(display, name, args, loc)
	if err != nil {
		return nil, err
	}
	call, err := ec.srfCall(unnestName, []plan.Expr{rows}, loc)
	if err != nil || name != "regexp_matches" {
		return call, err
	}
	return rowArray(call), nil
}

// textArray is text[].
var textArray = types.ArrayType(types.Of(types.Text))

// rowArray reads a regexp_matches row (the text of a text[]) as text[].
func rowArray(e plan.Expr) plan.Expr {
	return &plan.Func{Name: "regexp_matches", Args: []plan.Expr{e}, Typ: textArray,
		Fn: func(a []types.Value) (types.Value, error) {
			v, err := types.Parse(textArray, a[0].Str())
			if err != nil {
				return types.Null, errs.Newf(errs.Internal, "regexp_matches row %q: %v", a[0].Str(), err)
			}
			return v, nil
		}}
}
