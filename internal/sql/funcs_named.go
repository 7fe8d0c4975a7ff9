package sql

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// Named arguments of SQL functions: f(a => 1, b => 2) (or a := 1) places
// each named argument at the position of the function's parameter of that
// name, as PostgreSQL does. Positional arguments come first; the call
// must give every parameter exactly once (SQL functions here have no
// parameter defaults).

// hasNamedSQLFunction reports whether the catalog has a SQL function
// that call names with named parameters.
func (ec *exprCtx) hasNamedSQLFunction(call *pg.FuncCall) bool {
	fc, _ := ec.st.b.Cat.(FunctionCatalog)
	if fc == nil {
		return false
	}
	for _, f := range fc.Functions(funcName(call.Funcname)) {
		for _, n := range f.ArgNames {
			if n != "" {
				return true
			}
		}
	}
	return false
}

// placeSQLFunctionArgs orders args (names[i] the name of args[i], "" for
// a positional one) as the parameters of the one SQL function called name
// whose parameter names fit them.
func (ec *exprCtx) placeSQLFunctionArgs(f *pg.FuncCall, name string, args []plan.Expr, names []string) ([]plan.Expr, error) {
	seenNamed := false
	for i, n := range names {
		if n == "" && seenNamed {
			return nil, posErr(errs.New(errs.SyntaxError, "positional argument cannot follow named argument"), f.Location)
		}
		seenNamed = seenNamed || n != ""
		if n != "" && slices.Contains(names[:i], n) {
			return nil, posErr(errs.Newf(errs.SyntaxError, "argument name %q used more than once", n), f.Location)
		}
	}
	fc, _ := ec.st.b.Cat.(FunctionCatalog)
	var placed []plan.Expr
	fits := 0
	schema, _ := funcName(f.Funcname)
	for _, fn := range fc.Functions(schema, name) {
		if len(fn.ArgNames) != len(args) {
			continue
		}
		out := make([]plan.Expr, len(args))
		ok := true
		for i, a := range args {
			pos := i
			if names[i] != "" {
				pos = -1
				for k, n := range fn.ArgNames {
					if n == names[i] {
						pos = k
					}
				}
			}
			if pos < 0 || out[pos] != nil {
				ok = false
				break
			}
			out[pos] = a
		}
		if ok {
			placed, fits = out, fits+1
		}
	}
	if fits != 1 {
		code, what := errs.UndefinedFunction, "does not exist"
		if fits > 1 {
			code, what = errs.AmbiguousFunction, "is not unique"
		}
		return nil, posErr(errs.Newf(code, "function %s(%s) %s", name, argSignature(args, names), what), f.Location)
	}
	return placed, nil
}
