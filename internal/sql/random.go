package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// random() and setseed(x) draw from and seed the session's generator
// (Binder.Random), evaluated each time a row evaluates them, as in
// PostgreSQL. They are allowed where a statement runs once: queries and
// DML. A view's query is bound without a generator and refuses them: a
// maintained view must equal its query whenever it is read, and a random
// number changes each time it is drawn.

// randomFunction binds random() and setseed(x); ok is false for any other
// name.
func (ec *exprCtx) randomFunction(f *pg.FuncCall, name string) (plan.Expr, bool, error) {
	if name != "random" && name != "setseed" {
		return nil, false, nil
	}
	if err := ec.st.b.Clock.unfixed(f.Location, name+"()"); err != nil {
		return nil, true, err
	}
	r := ec.st.b.Random
	if r == nil {
		return nil, true, notSupported(f.Location, "%s() is not supported in a view or a column default: its result changes each time it is evaluated (queries and DML statements may use it)", name)
	}
	if f.AggStar || f.AggDistinct || len(f.AggOrder) > 0 || f.AggFilter != nil || f.Over != nil {
		return nil, true, nonDeterministic(f.Location, name+"()")
	}
	ec.st.b.UsedRandom = true
	args := make([]plan.Expr, len(f.Args))
	for i, a := range f.Args {
		e, err := ec.bind(a)
		if err != nil {
			return nil, true, err
		}
		args[i] = e
	}
	switch {
	case name == "random" && len(args) == 0:
		return &plan.Func{Name: "random", Typ: types.Of(types.Float8), NonStrict: true,
			Fn: func([]types.Value) (types.Value, error) { return types.MakeFloat8(r.Float64()), nil }}, true, nil
	case name == "setseed" && len(args) == 1:
		x, err := ec.coerce(args[0], types.Of(types.Float8), implicitCoercion)
		if err != nil {
			return nil, true, undefinedFunction(name, args, f.Location)
		}
		// PostgreSQL's setseed returns void; its column here is text,
		// an empty string.
		return &plan.Func{Name: "setseed", Args: []plan.Expr{x}, Typ: types.Of(types.Text),
			Fn: func(a []types.Value) (types.Value, error) {
				if err := r.SetSeed(a[0].Float()); err != nil {
					return types.Null, err
				}
				return types.MakeText(""), nil
			}}, true, nil
	}
	return nil, true, undefinedFunction(name, args, f.Location)
}
