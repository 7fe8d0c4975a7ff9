package sql

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// pg_options_to_table(options text[]) is the set-returning function
// pg_dump and psql read the option arrays of the catalogs with
// (attfdwoptions, fdwoptions, srvoptions, umoptions): one row
// (option_name, option_value) per "name=value" element, the value NULL
// when the element has no '='. It is unnest of the array whose scope
// columns split the element: option_name and option_value are
// expressions over unnest's one column, so it serves both in FROM and in
// ARRAY(SELECT ... FROM pg_options_to_table(a)) over the row's own array.

// optionsTableName is the function's name.
const optionsTableName = "pg_options_to_table"

// optionsTableArgs coerces the argument of pg_options_to_table to text[].
func (ec *exprCtx) optionsTableArgs(args []plan.Expr, loc int32) ([]plan.Expr, error) {
	if len(args) != 1 {
		return nil, undefinedFunction(optionsTableName, args, loc)
	}
	a, err := ec.coerce(args[0], textArray, implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, undefinedFunction(optionsTableName, args, loc)
	}
	return []plan.Expr{a}, err
}

// optionsAlias is the alias unnest's one column is bound under: for
// pg_options_to_table, alias without its column names, which
// splitOptions gives the split columns.
func optionsAlias(fn string, alias *pg.Alias) *pg.Alias {
	if fn != optionsTableName || alias == nil || len(alias.Colnames) == 0 {
		return alias
	}
	return &pg.Alias{Aliasname: alias.Aliasname}
}

// splitOptions makes the scope item of an unnest of an option array show
// option_name and option_value instead of the element (ordinality, when
// present, stays), named by alias's column names when it has them.
func splitOptions(item *fromItem, alias *pg.Alias) error {
	ns := item.ns[0]
	elem := ns.cols[0].expr
	text := types.Of(types.Text)
	cols := []nsCol{
		{name: "option_name", expr: &plan.Func{Name: "option_name", Args: []plan.Expr{elem}, Typ: text, Fn: optionName}},
		{name: "option_value", expr: &plan.Func{Name: "option_value", Args: []plan.Expr{elem}, Typ: text, Fn: optionValue}},
	}
	cols = append(cols, ns.cols[1:]...)
	if alias != nil {
		if len(alias.Colnames) > len(cols) {
			return errs.Newf(errs.InvalidColumnRef, "table %q has %d columns available but %d columns specified",
				alias.Aliasname, len(cols), len(alias.Colnames))
		}
		for i, n := range alias.Colnames {
			cols[i].name = n.GetString_().GetSval()
		}
	}
	ns.cols = cols
	item.cols = cols
	return nil
}

// optionName is the part of "name=value" before the first '='.
func optionName(a []types.Value) (types.Value, error) {
	name, _, _ := strings.Cut(a[0].Str(), "=")
	return types.MakeText(name), nil
}

// optionValue is the part of "name=value" after the first '=', NULL
// without one.
func optionValue(a []types.Value) (types.Value, error) {
	_, value, ok := strings.Cut(a[0].Str(), "=")
	if !ok {
		return types.Null, nil
	}
	return types.MakeText(value), nil
}
