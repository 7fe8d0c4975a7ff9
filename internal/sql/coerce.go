package sql

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// coercion is how strictly a conversion is allowed, as pg_cast's contexts.
type coercion uint8

const (
	implicitCoercion   coercion = iota // operands, CASE, UNION, ...
	assignmentCoercion                 // INSERT and UPDATE targets
	explicitCoercion                   // CAST and ::
)

// errNoCast reports that no cast of the required context exists; callers
// turn it into the message of their construct.
var errNoCast = errors.New("no cast")

// paramTyper records the type inferred for an Unknown-typed parameter.
type paramTyper func(p *plan.Param, t types.Type) error

// constrained reports whether t carries a type modifier (numeric precision,
// varchar length, fractional-second digits).
func constrained(t types.Type) bool { return t.Precision >= 0 || t.Length >= 0 || t.Fields != 0 }

// realType reports whether id is a concrete SQL type (operators may name
// polymorphic pseudo-types for their operands, which take any type).
func realType(id types.TypeID) bool {
	return id > types.Unknown && (id <= types.Jsonb || id == types.Time || id == types.TimeTZ || types.IsCatalogType(id)) || id.IsArray()
}

// coerceExpr converts e to type to under context c, as PostgreSQL's
// coerce_type and coerce_type_typmod do:
//   - an Unknown literal is parsed as to at bind time (with to's modifier
//     applied), a NULL literal simply takes the type;
//   - an Unknown parameter takes the type (setParam records it);
//   - the same type needs no conversion, except that assignment and
//     explicit casts apply a differing type modifier;
//   - otherwise a cast allowed in context c becomes a plan.Cast.
//
// It returns errNoCast when no cast applies; parse errors of literals are
// returned with the literal's position.
//
// z is the session time zone, for the casts that depend on it
// (timestamptz to and from text, timestamp and date).
func coerceExpr(e plan.Expr, to types.Type, c coercion, setParam paramTyper, z types.Zone) (plan.Expr, error) {
	from := e.Type()
	if from.ID == types.Unknown {
		switch x := e.(type) {
		case *plan.Const:
			if x.Val.IsNull() {
				return &plan.Const{Val: types.Null, Typ: to}, nil
			}
			// The input function sees an interval's fields, which give a
			// bare number its unit (INTERVAL '90' DAY); the cast below
			// applies the other modifiers.
			in := types.Of(to.ID)
			in.Fields = to.Fields
			v, err := types.ParseZone(in, x.Val.Str(), z)
			if err != nil {
				// PostgreSQL reports an input function's error at the
				// literal; the modifier applied next has no position.
				return nil, errs.WithPosition(err, x.Pos)
			}
			if constrained(to) {
				if v, err = types.CastZone(v, to, c == explicitCoercion, z); err != nil {
					return nil, err
				}
			}
			return &plan.Const{Val: v, Typ: to}, nil
		case *plan.Param:
			base := types.Of(to.ID)
			if setParam != nil {
				if err := setParam(x, base); err != nil {
					return nil, err
				}
			} else {
				x.Typ = base
			}
			if constrained(to) {
				return &plan.Cast{Arg: x, Typ: to, Explicit: c == explicitCoercion, Zone: z}, nil
			}
			return x, nil
		}
	}
	if from.Vector && to.ID == types.Text {
		// int2vector and oidvector cast to text through their own output
		// function ("1 2"), not array_out.
		return &plan.Func{Name: "vector_text", Args: []plan.Expr{e}, Typ: to,
			Fn:     func(v []types.Value) (types.Value, error) { return types.MakeText(types.Format(v[0], from)), nil },
			Render: func(a []string) string { return "(" + a[0] + ")::text" }}, nil
	}
	if from.ID == to.ID {
		if c != implicitCoercion && constrained(to) && from != to {
			return castOf(e, to, c == explicitCoercion, z)
		}
		return e, nil
	}
	if !castAllowed(from.ID, to.ID, c) {
		return nil, errNoCast
	}
	return castOf(e, to, c == explicitCoercion, z)
}

// castOf converts e to type to. A constant is converted now, as
// PostgreSQL's planner folds casts of constants (so that a plan never
// converts the same constant once per row).
func castOf(e plan.Expr, to types.Type, explicit bool, z types.Zone) (plan.Expr, error) {
	if k, ok := e.(*plan.Const); ok {
		if k.Val.IsNull() {
			return &plan.Const{Val: types.Null, Typ: to}, nil
		}
		v, err := types.CastZone(k.Val, to, explicit, z)
		if err != nil {
			return nil, err
		}
		return &plan.Const{Val: v, Typ: to}, nil
	}
	if err := types.CheckTimeTZCast(e.Type().ID, to.ID, z); err != nil {
		return nil, err
	}
	return &plan.Cast{Arg: e, Typ: to, Explicit: explicit, Zone: z}, nil
}

// noteCast records that a conversion from one type to another reads
// the clock when it takes the session zone's offset on the current date
// (time or text to timetz in a zone with daylight saving time), so that
// what binds it is bound again at each statement's clock (a column
// default, a cached plan). Where the binder has no clock (a view's
// query), the conversion itself refuses such a zone.
func (st *bindState) noteCast(from, to types.Type) {
	if !st.b.Zone.Dated() {
		return
	}
	if st.b.AnyZone && types.CastMayReadCurrentDate(from.ID, to.ID) || types.CastReadsCurrentDate(from.ID, to.ID, st.b.Zone) {
		st.b.UsedClock = true
	}
}

// castAllowed reports whether a cast from one type to another may be
// applied in context c.
func castAllowed(from, to types.TypeID, c coercion) bool {
	if from == to || from == types.Unknown {
		return true
	}
	k := types.CastContext(from, to)
	switch c {
	case implicitCoercion:
		return k == types.ImplicitCast
	case assignmentCoercion:
		return k == types.ImplicitCast || k == types.AssignmentCast
	}
	return k != types.NoCast
}

// Coerce converts e to type to by assignment rules (as INSERT and UPDATE
// store values): Unknown literals are parsed as to; other types need an
// assignment or implicit cast, else 42804 naming column.
//
// An Unknown-typed parameter takes the type to; Coerce cannot record that
// in a Binder, so a caller binding parameters uses Binder.Assign instead.
func Coerce(e plan.Expr, to types.Type, column string) (plan.Expr, error) {
	return assign(e, to, column, nil, types.UTCZone)
}

// Assign is Coerce that also records the type inferred for an
// Unknown-typed parameter in b.ParamTypes (as INSERT ... VALUES ($1)
// infers $1 from the target column).
func (b *Binder) Assign(e plan.Expr, to types.Type, column string) (plan.Expr, error) {
	st := newBindState(b)
	st.noteCast(e.Type(), to)
	out, err := assign(e, to, column, st.setParamType, b.Zone)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func assign(e plan.Expr, to types.Type, column string, setParam paramTyper, z types.Zone) (plan.Expr, error) {
	out, err := coerceExpr(e, to, assignmentCoercion, setParam, z)
	if errors.Is(err, errNoCast) {
		return nil, errs.Newf(errs.DatatypeMismatch,
			"column %q is of type %s but expression is of type %s", column, to, e.Type())
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AssignLiteral converts a literal of an INSERT's VALUES list straight to
// the value it stores in a column of type to, as binding the literal and
// assigning it to the column would (Binder.Scalar, then Assign): a string
// is read by to's input function, a NULL takes the type, an integer that
// fits 32 bits goes into an integer or bigint column, and a typed string
// of the column's type (TIMESTAMP '...', '...'::numeric(5,2)) is read as
// its type says. It reports false for anything else, which the caller
// binds the general way. z is the session time zone, in which timestamptz
// text without an offset is read.
func AssignLiteral(n *pg.Node, to types.Type, z types.Zone) (types.Value, bool, error) {
	if tc := n.GetTypeCast(); tc != nil {
		return assignTypedLiteral(tc, to, z)
	}
	c := n.GetAConst()
	if c == nil || types.IsReg(to.ID) || to.ID.IsArray() {
		return types.Null, false, nil
	}
	if c.Isnull || c.Val == nil {
		return types.Null, true, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Sval:
		in := types.Of(to.ID)
		in.Fields = to.Fields
		val, err := types.ParseZone(in, v.Sval.Sval, z)
		if err != nil {
			return types.Null, true, errs.WithPosition(err, int(c.Location)+1)
		}
		if constrained(to) {
			val, err = types.Cast(val, to, false)
		}
		return val, true, err
	case *pg.A_Const_Ival:
		switch to.ID {
		case types.Int4, types.Int8:
			return types.MakeInt(to.ID, int64(v.Ival.Ival)), true, nil
		}
	}
	return types.Null, false, nil
}

// assignTypedLiteral is AssignLiteral for a cast of a string or NULL
// literal to a type of the column's kind.
func assignTypedLiteral(tc *pg.TypeCast, to types.Type, z types.Zone) (types.Value, bool, error) {
	c := tc.Arg.GetAConst()
	if c == nil || types.IsReg(to.ID) || to.ID.IsArray() {
		return types.Null, false, nil
	}
	sv, isString := c.Val.(*pg.A_Const_Sval)
	if !isString && !c.Isnull {
		return types.Null, false, nil
	}
	cast, err := typeOf(tc.TypeName)
	if err != nil || cast.ID != to.ID {
		return types.Null, false, nil
	}
	if c.Isnull {
		return types.Null, true, nil
	}
	in := types.Of(cast.ID)
	in.Fields = cast.Fields
	v, err := types.ParseZone(in, sv.Sval.Sval, z)
	if err != nil {
		return types.Null, true, errs.WithPosition(err, int(c.Location)+1)
	}
	if constrained(cast) {
		if v, err = types.Cast(v, cast, true); err != nil {
			return types.Null, true, err
		}
	}
	if constrained(to) && to != cast {
		v, err = types.Cast(v, to, false)
	}
	return v, true, err
}
