package sql

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// json has no equality or ordering operators in PostgreSQL, so the
// constructs that compare whole values (GROUP BY, DISTINCT, UNION,
// INTERSECT and EXCEPT without ALL, ORDER BY, DISTINCT aggregates) fail
// with 42883 on it, as there. The engine could compare the texts, but
// that would answer queries PostgreSQL refuses.

// needEquality fails when e is of type json.
func needEquality(e plan.Expr, loc int32) error {
	if e.Type().ID == types.Json {
		return posErr(errs.New(errs.UndefinedFunction, "could not identify an equality operator for type json"), loc)
	}
	return nil
}

// needOrdering fails when e is of type json.
func needOrdering(e plan.Expr, loc int32) error {
	if e.Type().ID == types.Json {
		return posErr(errs.New(errs.UndefinedFunction, "could not identify an ordering operator for type json"), loc)
	}
	return nil
}

// columnsNeedEquality fails when one of cols is of type json.
func columnsNeedEquality(cols []plan.Column) error {
	for _, c := range cols {
		if c.Type.ID == types.Json {
			return errs.New(errs.UndefinedFunction, "could not identify an equality operator for type json")
		}
	}
	return nil
}
