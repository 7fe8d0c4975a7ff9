package lake

import "math"

// castValue converts v to type t: an explicit CAST (explicit true) or an
// assignment to a column (false). Untyped literals go through the
// target type's input function.
func castValue(v Value, t Type, explicit bool) (Value, error) {
	if v.Null {
		return nullOf(t), nil
	}
	if v.T == t {
		return v, nil
	}
	switch {
	case v.T == TUnknown || (explicit && v.T.isText()):
		return parseText(t, v.S)
	case v.T.isInt() && (t.isInt() || t == TOid):
		return checkRange(intOf(t, v.I))
	case v.T.isInt() && (t == TFloat4 || t == TFloat8):
		return Value{T: t, F: float64(v.I)}, nil
	case (v.T == TFloat4 || v.T == TFloat8) && (t == TFloat4 || t == TFloat8):
		f := v.F
		if t == TFloat4 {
			f = float64(float32(f))
		}
		return Value{T: t, F: f}, nil
	case (v.T == TFloat8 || v.T == TFloat4) && t.isInt():
		r := roundHalfAway(v.F)
		if math.IsNaN(r) || r >= 9223372036854775808.0 || r < -9223372036854775808.0 {
			return Value{}, outOfRange(t)
		}
		return checkRange(intOf(t, int64(r)))
	case v.T.isText() && t.isText():
		return textOf(t, v.S), nil
	case t.isText() && (isNumber(v.T) || v.T == TBool):
		s := v.Text()
		if v.T == TBool {
			s = map[bool]string{true: "true", false: "false"}[v.I != 0]
		} else if v.S != "" && v.T == TFloat8 {
			s = v.S
		}
		return textOf(t, s), nil
	case v.T.isInt() && t == TBool && explicit:
		return boolOf(v.I != 0), nil
	}
	if explicit {
		return Value{}, errorf("42846", "cannot cast type %s to %s", types[v.T].sql, types[t].sql)
	}
	return Value{}, errorf(codeDatatypeMismatch, "column is of type %s but expression is of type %s", types[t].sql, types[v.T].sql)
}

func roundHalfAway(f float64) float64 { return math.Round(f) }

// evalRow holds, per scope relation, the current row and its tid.
type evalRow struct {
	vals [][]Value
	tids []int64
}

// eval computes a bound expression. Booleans use three-valued logic:
// NULL is "unknown".
func eval(e expr, r *evalRow) (Value, error) {
	switch e := e.(type) {
	case eConst:
		return e.v, nil
	case eSlot:
		if e.col < 0 {
			return intOf(TTid, r.tids[e.rel]), nil
		}
		return r.vals[e.rel][e.col], nil
	case eCast:
		v, err := eval(e.e, r)
		if err != nil {
			return Value{}, err
		}
		return castValue(v, e.t, true)
	case eCmp:
		l, err := eval(e.l, r)
		if err != nil {
			return Value{}, err
		}
		rv, err := eval(e.r, r)
		if err != nil {
			return Value{}, err
		}
		if l.Null || rv.Null {
			return nullOf(TBool), nil
		}
		c := compare(l, rv)
		switch e.op {
		case "=":
			return boolOf(c == 0), nil
		case "<>":
			return boolOf(c != 0), nil
		case "<":
			return boolOf(c < 0), nil
		case "<=":
			return boolOf(c <= 0), nil
		case ">":
			return boolOf(c > 0), nil
		case ">=":
			return boolOf(c >= 0), nil
		}
	case eBool:
		sawNull := false
		for _, a := range e.args {
			v, err := eval(a, r)
			if err != nil {
				return Value{}, err
			}
			if v.Null {
				sawNull = true
				continue
			}
			if (v.I != 0) != e.and {
				return boolOf(!e.and), nil
			}
		}
		if sawNull {
			return nullOf(TBool), nil
		}
		return boolOf(e.and), nil
	case eNot:
		v, err := eval(e.e, r)
		if err != nil || v.Null {
			return v, err
		}
		return boolOf(v.I == 0), nil
	case eNullTest:
		v, err := eval(e.e, r)
		if err != nil {
			return Value{}, err
		}
		return boolOf(v.Null != e.not), nil
	case eIn:
		v, err := eval(e.e, r)
		if err != nil {
			return Value{}, err
		}
		if v.Null {
			return nullOf(TBool), nil
		}
		sawNull := false
		for _, item := range e.list {
			w, err := eval(item, r)
			if err != nil {
				return Value{}, err
			}
			if w.Null {
				sawNull = true
				continue
			}
			if compare(v, w) == 0 {
				return boolOf(!e.not), nil
			}
		}
		if sawNull {
			return nullOf(TBool), nil
		}
		return boolOf(e.not), nil
	case eBetween:
		v, err := eval(e.e, r)
		if err != nil {
			return Value{}, err
		}
		lo, err := eval(e.lo, r)
		if err != nil {
			return Value{}, err
		}
		hi, err := eval(e.hi, r)
		if err != nil {
			return Value{}, err
		}
		if v.Null || lo.Null || hi.Null {
			return nullOf(TBool), nil
		}
		in := compare(v, lo) >= 0 && compare(v, hi) <= 0
		return boolOf(in != e.not), nil
	}
	return Value{}, errUnsupported(e.String())
}

// truth is WHERE's reading of a boolean: only true passes.
func truth(e expr, r *evalRow) (bool, error) {
	if e == nil {
		return true, nil
	}
	v, err := eval(e, r)
	if err != nil {
		return false, err
	}
	return !v.Null && v.I != 0, nil
}
