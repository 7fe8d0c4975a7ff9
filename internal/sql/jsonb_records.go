package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// jsonb_to_record(object) AS t(a int, b text, ...) and
// jsonb_to_recordset(array of objects) AS t(...) in FROM are an unnest of
// the objects (one, or the array's elements) followed by a projection of
// the listed columns: each is the object's member of its name, converted
// to the column's type as PostgreSQL's populate_record does — the JSON
// text of the member (a string's contents) through the type's input
// function, the member itself for a jsonb column, NULL when it is missing
// or null.

// jsonbRecord is the column definition list of a jsonb_to_record(set)
// call.
type jsonbRecord struct {
	fields []plan.Column
	arrow  *types.Operator // jsonb -> text
	text   *types.Operator // jsonb ->> text
}

// isJSONBRecordFunc reports whether name is jsonb_to_record(set).
func isJSONBRecordFunc(name string) bool {
	return name == "jsonb_to_record" || name == "jsonb_to_recordset"
}

// jsonbRecordArgs binds the call's argument as the array of objects to
// unnest and reads its column definition list.
func (ec *exprCtx) jsonbRecordArgs(fn string, rf *pg.RangeFunction, args []plan.Expr, loc int32) (*jsonbRecord, []plan.Expr, error) {
	if len(args) != 1 {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	if rf.Ordinality {
		return nil, nil, posErr(errs.New(errs.SyntaxError, "WITH ORDINALITY cannot be used with a column definition list"), loc)
	}
	if len(rf.Coldeflist) == 0 {
		return nil, nil, posErr(errs.New(errs.SyntaxError, `a column definition list is required for functions returning "record"`), loc)
	}
	obj, err := ec.coerce(args[0], types.Of(types.Jsonb), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return nil, nil, undefinedFunction(fn, args, loc)
	}
	if err != nil {
		return nil, nil, err
	}
	rec := &jsonbRecord{}
	for _, n := range rf.Coldeflist {
		cd := n.GetColumnDef()
		if cd == nil {
			return nil, nil, notSupported(loc, "this column definition is not supported")
		}
		t, err := typeOf(cd.TypeName)
		if err != nil {
			return nil, nil, err
		}
		if t.ID.IsArray() {
			return nil, nil, notSupported(loc, "array columns in the column definition list of %s are not supported", fn)
		}
		for _, f := range rec.fields {
			if f.Name == cd.Colname {
				return nil, nil, posErr(errs.Newf(errs.DuplicateColumn, "column %q specified more than once", cd.Colname), loc)
			}
		}
		rec.fields = append(rec.fields, plan.Column{Name: cd.Colname, Type: t})
	}
	if rec.arrow, err = types.ResolveBinary("->", types.Of(types.Jsonb), types.Of(types.Text)); err != nil {
		return nil, nil, posErr(err, loc)
	}
	if rec.text, err = types.ResolveBinary("->>", types.Of(types.Jsonb), types.Of(types.Text)); err != nil {
		return nil, nil, posErr(err, loc)
	}
	rows := types.JSONBToRecordRows(fn == "jsonb_to_recordset")
	return rec, []plan.Expr{&plan.Func{Name: fn, Args: []plan.Expr{obj}, Typ: types.Of(types.ArrayOf(types.Jsonb)),
		NonStrict: true, Fn: rows}}, nil
}

// plan makes u emit the input columns and each object, and projects them
// into the FROM item's columns: the fields.
func (r *jsonbRecord) plan(u *plan.Unnest, inCols, cols []plan.Column) plan.Node {
	n := len(inCols)
	object := plan.Column{Name: "object", Type: types.Of(types.Jsonb)}
	u.Cols = append(append([]plan.Column(nil), inCols...), object)
	exprs := make([]plan.Expr, 0, n+len(cols))
	for i, c := range inCols {
		exprs = append(exprs, &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type})
	}
	obj := &plan.ColRef{Index: n, Name: object.Name, Typ: object.Type}
	for _, f := range r.fields {
		key := &plan.Const{Val: types.MakeText(f.Name), Typ: types.Of(types.Text)}
		var e plan.Expr
		switch f.Type.ID {
		case types.Jsonb:
			e = &plan.BinOp{Op: r.arrow, Left: obj, Right: key}
		case types.Json:
			e = &plan.Cast{Arg: &plan.BinOp{Op: r.arrow, Left: obj, Right: key}, Typ: f.Type}
		default:
			e = &plan.Cast{Arg: &plan.BinOp{Op: r.text, Left: obj, Right: key}, Typ: f.Type}
		}
		exprs = append(exprs, e)
	}
	return &plan.Project{Input: u, Exprs: exprs, Cols: append(append([]plan.Column(nil), inCols...), cols...)}
}
