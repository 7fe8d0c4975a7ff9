package diff

import (
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

// A Filter whose predicate reads now() (a plan.Now, which the binder
// makes of now() and current_timestamp in a materialized view's query)
// becomes a temporal filter: its conjuncts that compare now(), shifted
// by constant intervals, with an expression of the row through <, <=, >
// or >= go to an ops.TemporalFilter, the other conjuncts to an ordinary
// filter below it. Any other use of now() (in an OR, under NOT, compared
// with =, through a function) is refused with 0A000 when the view is
// created. The Nows the circuit's temporal filters read are recorded
// (TemporalNows), so that the caller can refuse a view whose query reads
// now() anywhere else.

// temporalFilter builds the circuit of a Filter that reads now().
func (b *builder) temporalFilter(n *plan.Filter) (int, error) {
	var rest []plan.Expr
	var bounds []ops.TemporalBound
	var texts []string
	var nows []*plan.Now
	for _, c := range andArgs(n.Pred, nil) {
		if !plan.ContainsNow(c) {
			rest = append(rest, c)
			continue
		}
		bd, err := temporalBound(c)
		if err != nil {
			return 0, err
		}
		bounds = append(bounds, bd)
		texts = append(texts, c.String())
		nows = plan.NowsOf(nows, c)
	}
	if b.forQuery || b.serial {
		return 0, errs.New(errs.FeatureNotSupported, "now() in a recursive query of a materialized view is not supported")
	}
	in, err := b.build(n.Input)
	if err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		pred := rest[0]
		if len(rest) > 1 {
			pred = &plan.And{Args: rest}
		}
		in = b.add(node{
			op:      &ops.Filter{Pred: pred},
			inputs:  []int{in},
			explain: "filter " + pred.String() + "  state=none",
		})
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	id := b.add(node{
		op:      ops.NewTemporalFilter(prefix, bounds),
		inputs:  []int{in},
		explain: "temporal filter " + strings.Join(texts, " AND ") + "  state=schedule(time,row→weight)",
	})
	b.single(id)
	b.nows = append(b.nows, nows...)
	return id, nil
}

// andArgs appends the conjuncts of e to dst.
func andArgs(e plan.Expr, dst []plan.Expr) []plan.Expr {
	if a, ok := e.(*plan.And); ok {
		for _, x := range a.Args {
			dst = andArgs(x, dst)
		}
		return dst
	}
	return append(dst, e)
}

// temporalRefused is the error for a condition reading now() that is not
// a temporal bound.
func temporalRefused(c plan.Expr, why string) error {
	return errs.Newf(errs.FeatureNotSupported,
		"now() in a materialized view is supported only in a temporal filter: conditions of WHERE, JOIN ON or HAVING, joined by AND, that compare now() (plus or minus constant intervals) with an expression of the row by <, <=, > or >=; in %s %s", c, why)
}

// temporalBound is the bound a conjunct that reads now() sets.
func temporalBound(c plan.Expr) (ops.TemporalBound, error) {
	cmp, ok := c.(*plan.BinOp)
	if !ok {
		return ops.TemporalBound{}, temporalRefused(c, "now() is not compared directly (an OR, NOT or function of a comparison cannot be maintained as time passes)")
	}
	switch cmp.Op.Name {
	case "<", "<=", ">", ">=":
	default:
		return ops.TemporalBound{}, temporalRefused(c, "the comparison is "+cmp.Op.Name+", which does not hold over one interval of time")
	}
	ln, rn := plan.ContainsNow(cmp.Left), plan.ContainsNow(cmp.Right)
	if ln && rn {
		return ops.TemporalBound{}, temporalRefused(c, "both sides read now()")
	}
	nowSide, rowSide := cmp.Right, cmp.Left
	if ln {
		nowSide, rowSide = cmp.Left, cmp.Right
	}
	shifts, err := nowShifts(c, nowSide)
	if err != nil {
		return ops.TemporalBound{}, err
	}
	// row > now: holds until a time; row < now: from a time on.
	upper := cmp.Op.Name == ">" || cmp.Op.Name == ">="
	if ln {
		upper = !upper
	}
	return ops.NewTemporalBound(rowSide, cmp.Op, ln, shifts, upper), nil
}

// nowShifts returns the steps from now() to e, which must be now() plus
// or minus constant intervals, possibly cast to a type of time.
func nowShifts(c, e plan.Expr) ([]ops.NowShift, error) {
	switch x := e.(type) {
	case *plan.Now:
		return nil, nil
	case *plan.Cast:
		switch x.Typ.ID {
		case types.TimestampTZ, types.Timestamp, types.Date:
		default:
			return nil, temporalRefused(c, "now() is cast to "+x.Typ.String())
		}
		s, err := nowShifts(c, x.Arg)
		return append(s, ops.NowShift{Cast: x}), err
	case *plan.BinOp:
		if x.Op.Name == "+" || x.Op.Name == "-" {
			if plan.ContainsNow(x.Left) && constExpr(x.Right) && x.Right.Type().ID == types.Interval {
				v, err := x.Right.Eval(nil)
				if err != nil {
					return nil, err
				}
				s, err := nowShifts(c, x.Left)
				return append(s, ops.NowShift{Op: x.Op, Val: v}), err
			}
			if x.Op.Name == "+" && plan.ContainsNow(x.Right) && constExpr(x.Left) && x.Left.Type().ID == types.Interval {
				v, err := x.Left.Eval(nil)
				if err != nil {
					return nil, err
				}
				s, err := nowShifts(c, x.Right)
				return append(s, ops.NowShift{Op: x.Op, Val: v, ValLeft: true}), err
			}
		}
	}
	return nil, temporalRefused(c, "now() goes through "+e.String()+", which is not now() plus or minus a constant interval")
}

// constExpr reports whether e is built of constants alone.
func constExpr(e plan.Expr) bool {
	switch x := e.(type) {
	case *plan.Const:
		return true
	case *plan.Cast, *plan.BinOp, *plan.UnaryOp:
		for _, k := range plan.Children(x) {
			if !constExpr(k) {
				return false
			}
		}
		return true
	}
	return false
}

// TemporalNows returns the now() calls the circuit's temporal filters
// read.
func (c *Circuit) TemporalNows() []*plan.Now { return c.nows }

// Temporal reports whether the circuit has a temporal filter.
func (c *Circuit) Temporal() bool { return len(c.nows) > 0 }

// NextDue returns the earliest time (microseconds since 1970 UTC) at
// which one of the circuit's temporal filters has a scheduled change, if
// any has.
func (c *Circuit) NextDue(r state.Reader) (int64, bool, error) {
	var at int64
	found := false
	for i := range c.nodes {
		t, ok := c.nodes[i].op.(*ops.TemporalFilter)
		if !ok {
			continue
		}
		d, ok, err := t.NextDue(r)
		if err != nil {
			return 0, false, err
		}
		if ok && (!found || d < at) {
			at, found = d, true
		}
	}
	return at, found, nil
}
