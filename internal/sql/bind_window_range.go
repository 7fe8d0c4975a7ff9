package sql

import (
	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// rangeOffsetTypes are the offset types PostgreSQL's in_range support
// functions take for each ORDER BY key type (the btree operator families'
// amproc 3 entries), in catalog order.
var rangeOffsetTypes = map[types.TypeID][]types.TypeID{
	types.Int2:        {types.Int8, types.Int4, types.Int2},
	types.Int4:        {types.Int8, types.Int4, types.Int2},
	types.Int8:        {types.Int8},
	types.Numeric:     {types.Numeric},
	types.Float4:      {types.Float8},
	types.Float8:      {types.Float8},
	types.Date:        {types.Interval},
	types.Timestamp:   {types.Interval},
	types.TimestampTZ: {types.Interval},
	types.Interval:    {types.Interval},
}

// rangeOffset binds the offset of a RANGE frame bound over an ORDER BY key
// of type key, choosing the in_range variant as PostgreSQL does (the one
// whose offset type is the offset's own, or the key's for an untyped
// literal, else the only one the offset converts to implicitly), and
// evaluates it: a constant that is neither NULL nor negative.
func (ec *exprCtx) rangeOffset(n *pg.Node, key types.Type, loc int32) (types.Value, types.Type, error) {
	oc := &exprCtx{st: ec.st, sc: ec.sc, kind: kindLimit}
	e, err := oc.bind(n)
	if err != nil {
		return types.Null, types.Type{}, err
	}
	if hasColRefs(e) {
		return types.Null, types.Type{}, posErr(errs.New(errs.InvalidColumnRef,
			"argument of RANGE must not contain variables"), exprLocation(n))
	}
	if l := exprLocation(n); l >= 0 {
		loc = l
	}
	cands, ok := rangeOffsetTypes[key.ID]
	if !ok {
		return types.Null, types.Type{}, notSupported(loc,
			"RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", key)
	}
	from := e.Type().ID
	preferred := from
	if from == types.Unknown {
		preferred = key.ID
	}
	var usable []types.TypeID
	chosen := types.Unknown
	for _, c := range cands {
		if from == c || from == types.Unknown || castAllowed(from, c, implicitCoercion) {
			usable = append(usable, c)
			if c == preferred {
				chosen = c
			}
		}
	}
	switch {
	case len(usable) == 0:
		return types.Null, types.Type{}, notSupported(loc,
			"RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", key, e.Type())
	case chosen == types.Unknown && len(usable) > 1:
		return types.Null, types.Type{}, notSupported(loc,
			"RANGE with offset PRECEDING/FOLLOWING has multiple interpretations for column type %s and offset type %s", key, e.Type())
	case chosen == types.Unknown:
		chosen = usable[0]
	}
	t := types.Of(chosen)
	c, err := oc.coerce(e, t, implicitCoercion)
	if err != nil {
		return types.Null, types.Type{}, err
	}
	v, err := c.Eval(nil)
	if err != nil {
		return types.Null, types.Type{}, posErr(err, exprLocation(n))
	}
	if v.IsNull() {
		return types.Null, types.Type{}, errs.New(errs.NullValueNotAllowed, "frame offset must not be null")
	}
	if negativeOffset(v) {
		return types.Null, types.Type{}, errs.New(errs.InvalidWindowFrame, "invalid preceding or following size in window function")
	}
	return v, t, nil
}

// negativeOffset reports whether a RANGE offset is negative (or NaN),
// which in_range rejects.
func negativeOffset(v types.Value) bool {
	switch v.Kind() {
	case types.Int2, types.Int4, types.Int8:
		return v.Int() < 0
	case types.Numeric:
		d := v.Decimal()
		return d.Negative || d.Form == apd.NaN
	case types.Float4, types.Float8:
		f := v.Float()
		return f < 0 || f != f
	case types.Interval:
		zero := types.MakeInterval(types.IntervalValue{})
		return types.Compare(v, zero) < 0
	}
	return false
}
