package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Composite results of set-returning functions. RockStream has no
// composite values; a set-returning function whose rows have several
// columns — information_schema._pg_expandarray(array), rows (x, n) of
// each element and its position, which pgJDBC's getPrimaryKeys reads —
// is instead a record of set-returning calls, one per field, zipped in
// the select list as any other calls:
//
//   - (f(...)).field is that field's call;
//   - f(...) AS name in a select list becomes one column per field,
//     named name NUL field (a name no identifier can spell), so that a
//     query around it reads (alias.name).field as that column;
//   - a composite column anywhere else (a bare reference, a result
//     column of the statement) is not supported (0A000).

// fieldSep separates a composite column's name from its field's.
const fieldSep = "\x00"

// recordExpr is a composite-valued set-returning call: its fields' names
// and the set-returning calls giving their values.
type recordExpr struct {
	name   string
	fields []string
	exprs  []plan.Expr
}

func (r *recordExpr) Type() types.Type { return types.Of(types.Unknown) }
func (r *recordExpr) String() string   { return r.name + "(...)" }
func (r *recordExpr) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "composite value evaluated")
}

// field returns the call of field name, or an error naming it.
func (r *recordExpr) field(name string, loc int32) (plan.Expr, error) {
	for i, f := range r.fields {
		if f == name {
			return r.exprs[i], nil
		}
	}
	return nil, posErr(errs.Newf(errs.UndefinedColumn, "could not identify column %q in record data type", name), loc)
}

// recordCall binds a composite-valued set-returning function of the
// catalog schemas; ok is false for any other function.
func (ec *exprCtx) recordCall(schema, name string, args []plan.Expr, loc int32) (plan.Expr, bool, error) {
	if schema != "information_schema" || name != "_pg_expandarray" {
		return nil, false, nil
	}
	if len(args) != 1 || !args[0].Type().ID.IsArray() {
		return nil, true, undefinedFunction("information_schema._pg_expandarray", args, loc)
	}
	x, err := ec.srfCall("unnest", args, loc)
	if err != nil {
		return nil, true, err
	}
	n, err := ec.srfCall("generate_subscripts", []plan.Expr{args[0], &plan.Const{Val: types.MakeInt(types.Int4, 1), Typ: types.Of(types.Int4)}}, loc)
	if err != nil {
		return nil, true, err
	}
	return &recordExpr{name: name, fields: []string{"x", "n"}, exprs: []plan.Expr{x, n}}, true, nil
}

// recordTargets expands a composite select-list item into one target per
// field; other items are returned as they are.
func recordTargets(t *target) []*target {
	r, ok := t.expr.(*recordExpr)
	if !ok {
		return []*target{t}
	}
	out := make([]*target, len(r.fields))
	for i, f := range r.fields {
		out[i] = &target{expr: r.exprs[i], name: t.name + fieldSep + f}
	}
	return out
}

// fieldSelection binds (arg).field: a field of a composite set-returning
// call, or of a composite column of a FROM item; ok is false when arg is
// neither.
func (ec *exprCtx) fieldSelection(arg *pg.Node, field string, loc int32) (plan.Expr, bool, error) {
	if fc := arg.GetFuncCall(); fc != nil {
		e, err := ec.bind(arg)
		if err != nil {
			return nil, true, err
		}
		if r, ok := e.(*recordExpr); ok {
			e, err := r.field(field, loc)
			return e, true, err
		}
		return nil, false, nil
	}
	cr := arg.GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 || cr.Fields[len(cr.Fields)-1].GetString_() == nil {
		return nil, false, nil
	}
	fields := append([]*pg.Node(nil), cr.Fields...)
	last := fields[len(fields)-1].GetString_().GetSval()
	fields[len(fields)-1] = pg.MakeStrNode(last + fieldSep + field)
	e, err := ec.columnRef(&pg.ColumnRef{Fields: fields, Location: cr.Location})
	if errs.CodeOf(err) == errs.UndefinedColumn || errs.CodeOf(err) == errs.UndefinedTable {
		return nil, false, nil // not a composite column: the caller explains
	}
	return e, true, err
}

// compositeColumn reports a composite column among a statement's result
// columns, which cannot be returned.
func compositeColumn(cols []plan.Column) error {
	for _, c := range cols {
		if name, _, ok := strings.Cut(c.Name, fieldSep); ok {
			return errs.Newf(errs.FeatureNotSupported, "a composite value in a result (column %s) is not supported; select its fields as (%s).field", name, name)
		}
	}
	return nil
}

// compositeReference explains a reference to a composite column by its
// name alone (names did not resolve to a column); nil when there is no
// such column in sc.
func compositeReference(sc *Scope, names []string, loc int32) error {
	name := names[len(names)-1]
	for _, it := range sc.items {
		for _, c := range it.cols {
			if strings.HasPrefix(c.name, name+fieldSep) {
				return notSupported(loc, "composite values are not supported: read the fields of %s as (%s).field", name, strings.Join(names, "."))
			}
		}
	}
	return nil
}
