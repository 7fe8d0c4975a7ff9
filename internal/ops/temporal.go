package ops

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A temporal filter keeps the rows of its input for which conjuncts such
// as ts > now() - interval '1 hour' hold at the time of the epoch: its
// output at time t is the input rows whose validity [L, U) holds t, where
// L is the earliest time at which every lower bound holds and U the
// earliest at which some upper bound fails. That is a linear function of
// the input for a fixed t, so each input row (with its weight w) is
// turned into an insertion of w at L and a retraction of w at U: the one
// that is due now (L <= now < U) is emitted at once, the others go into
// a schedule kept in the operator's state, and each step first emits
// the scheduled changes whose time has come. A deleted row schedules the
// opposite weights, which cancel its pending changes. The operator is
// deterministic: it reads the epoch's time from the state store, under
// ClockKey, where the runtime puts it, and never goes back in time (a
// clock that goes back is taken as standing still).

// ClockKey is where the runtime keeps the time of the epoch being
// stepped: 8 bytes, the microseconds since 1970-01-01 00:00:00 UTC of
// a timestamptz, big-endian. It is the metadata namespace's key "clock"
// (docs/format/storage.md).
var ClockKey = []byte{0x04, 'c', 'l', 'o', 'c', 'k'}

// ClockDomain bounds the times a temporal filter is evaluated at, as
// microseconds since 1970-01-01 00:00:00 UTC: from that instant to the
// year 10000. The clock is assumed to stay inside it.
const (
	ClockDomainStart int64 = 0
	ClockDomainEnd   int64 = 253402300800000000
)

// Never and Always are the thresholds of a bound that never (Never) or
// always (Always, for a lower bound) holds.
const (
	Always int64 = math.MinInt64
	Never  int64 = math.MaxInt64
)

// NowShift is one step from now() to the expression a temporal bound
// compares with: Op applied to the running value and Val (Val on the
// left when ValLeft), or, with Op nil, a cast to Cast.
type NowShift struct {
	Op      *types.Operator
	Val     types.Value
	ValLeft bool
	Cast    *plan.Cast
}

// TemporalBound is one conjunct of a temporal filter: Cmp applied to the
// row's side Row and the now side (now() through Shifts), the now side on
// the left when NowLeft. Upper is true when the conjunct holds until a
// time and false when it holds from a time on.
type TemporalBound struct {
	Row     plan.Expr
	Cmp     *types.Operator
	NowLeft bool
	Shifts  []NowShift
	Upper   bool
	// fast, when set, is the constant number of microseconds the shifts
	// add to now: the threshold is then computed, not searched.
	fast  bool
	shift int64
}

// NewTemporalBound returns the bound, working out whether its threshold
// can be computed directly: when both compared values are timestamptz
// and the shifts add intervals without months or days.
func NewTemporalBound(row plan.Expr, cmp *types.Operator, nowLeft bool, shifts []NowShift, upper bool) TemporalBound {
	b := TemporalBound{Row: row, Cmp: cmp, NowLeft: nowLeft, Shifts: shifts, Upper: upper}
	if cmp.Left.ID != types.TimestampTZ || cmp.Right.ID != types.TimestampTZ {
		return b
	}
	var k int64
	for _, s := range shifts {
		if s.Op == nil || s.Val.IsNull() || s.Val.Kind() != types.Interval {
			return b
		}
		iv := s.Val.Interval()
		if iv.Months != 0 || iv.Days != 0 {
			return b
		}
		switch {
		case s.Op.Name == "+":
			k += iv.Micros
		case s.Op.Name == "-" && !s.ValLeft:
			k -= iv.Micros
		default:
			return b
		}
	}
	b.fast, b.shift = true, k
	return b
}

// nowSide is the now side of the bound at time now.
func (b *TemporalBound) nowSide(now int64) (types.Value, error) {
	v := types.MakeTimestampTZ(now)
	for _, s := range b.Shifts {
		var err error
		switch {
		case s.Op == nil:
			v, err = types.CastZone(v, s.Cast.Typ, s.Cast.Explicit, s.Cast.Zone)
		case s.ValLeft:
			v, err = s.Op.Eval(s.Val, v)
		default:
			v, err = s.Op.Eval(v, s.Val)
		}
		if err != nil || v.IsNull() {
			return v, err
		}
	}
	return v, nil
}

// holds evaluates the bound at time now for the row's side x.
func (b *TemporalBound) holds(x types.Value, now int64) (bool, error) {
	g, err := b.nowSide(now)
	if err != nil || g.IsNull() {
		return false, err
	}
	var r types.Value
	if b.NowLeft {
		r, err = b.Cmp.Eval(g, x)
	} else {
		r, err = b.Cmp.Eval(x, g)
	}
	return err == nil && !r.IsNull() && r.Bool(), err
}

// Threshold returns the time at which the bound changes for row: for an
// upper bound the first time it no longer holds, for a lower bound the
// first time it holds (Always, Never at the ends). ok is false when the
// bound is NULL for the row: the row is never in the output.
func (b *TemporalBound) Threshold(row zset.Row) (t int64, ok bool, err error) {
	x, err := b.Row.Eval(row)
	if err != nil || x.IsNull() {
		return 0, false, err
	}
	if b.fast {
		return b.direct(x.Micros()), true, nil
	}
	// The bound is monotone in now: search for the time it changes.
	lo, hi := ClockDomainStart, ClockDomainEnd
	first, err := b.holds(x, lo)
	if err != nil {
		return 0, false, err
	}
	last, err := b.holds(x, hi)
	if err != nil {
		return 0, false, err
	}
	want := !b.Upper // the value after the change
	switch {
	case first == want:
		return Always, true, nil
	case last != want:
		return Never, true, nil
	}
	// holds(lo) != want, holds(hi) == want.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		h, err := b.holds(x, mid)
		if err != nil {
			return 0, false, err
		}
		if h == want {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true, nil
}

// direct is the threshold of a fast bound over the row's timestamptz x.
func (b *TemporalBound) direct(x int64) int64 {
	// With the now side on the left, now+k < x is x > now+k.
	op := b.Cmp.Name
	if b.NowLeft {
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	switch x {
	case types.TimestampPosInfinity:
		if b.Upper {
			return Never // x > now+k holds for ever
		}
		return Never // x < now+k never holds
	case types.TimestampNegInfinity:
		return Always
	}
	t := satAddTime(x, -b.shift)
	switch op {
	case ">": // now < x-k
		return t
	case ">=": // now <= x-k
		return satAddTime(t, 1)
	case "<": // now > x-k
		return satAddTime(t, 1)
	default: // "<=": now >= x-k
		return t
	}
}

// satAddTime is a+b, saturating at the int64 limits.
func satAddTime(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64 - 1
		}
		return math.MinInt64 + 1
	}
	return s
}

// TemporalFilter is the operator of a temporal filter (see above). It
// runs alone: its state is in the bucket of the empty key,
//
//	P | 't'                               → the time of its last step
//	P | 's' | time | EncodeRow(row)       → weight (varint)
//
// time being the microseconds of the change, big-endian with the sign
// bit flipped so that the schedule is in time order.
type TemporalFilter struct {
	prefix []byte
	Lower  []TemporalBound
	Upper  []TemporalBound
}

// NewTemporalFilter returns the operator for the bounds, keeping its
// state under prefix.
func NewTemporalFilter(prefix Prefix, bounds []TemporalBound) *TemporalFilter {
	t := &TemporalFilter{prefix: prefix.fixed()}
	for _, b := range bounds {
		if b.Upper {
			t.Upper = append(t.Upper, b)
		} else {
			t.Lower = append(t.Lower, b)
		}
	}
	return t
}

func (t *TemporalFilter) lastKey() []byte { return append(append([]byte(nil), t.prefix...), 't') }

func (t *TemporalFilter) schedulePrefix() []byte {
	return append(append([]byte(nil), t.prefix...), 's')
}

// scheduleKey is the key of row's change at time at.
func (t *TemporalFilter) scheduleKey(at int64, row zset.Row) []byte {
	k := binary.BigEndian.AppendUint64(t.schedulePrefix(), uint64(at)^(1<<63))
	return zset.EncodeRow(k, row)
}

// ReadClock returns the time under ClockKey in r.
func ReadClock(r state.Reader) (int64, bool, error) {
	v, ok, err := r.Get(ClockKey)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, corrupt("clock")
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// now is the time of this step: the clock, or the time of the last step
// when the clock is behind it.
func (t *TemporalFilter) now(st state.Store) (now, last int64, hasLast bool, err error) {
	v, ok, err := st.Get(t.lastKey())
	if err != nil {
		return 0, 0, false, err
	}
	if ok {
		if len(v) != 8 {
			return 0, 0, false, corrupt("temporal filter time")
		}
		last, hasLast = int64(binary.BigEndian.Uint64(v)), true
	}
	now, ok, err = ReadClock(st)
	if err != nil {
		return 0, 0, false, err
	}
	if !ok {
		if !hasLast {
			return 0, 0, false, errs.New(errs.Internal, "internal error: a temporal filter stepped without a clock")
		}
		now = last
	}
	if hasLast && now < last {
		now = last
	}
	return now, last, hasLast, nil
}

// Step implements Operator.
func (t *TemporalFilter) Step(ctx context.Context, st state.Store, in []zset.Batch) (zset.Batch, error) {
	now, last, hasLast, err := t.now(st)
	if err != nil {
		return nil, err
	}
	var out zset.Batch
	if !hasLast || now > last {
		if out, err = t.due(ctx, st, now); err != nil {
			return nil, err
		}
	}
	for i, e := range in[0] {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		from, until, ok, err := t.validity(e.Row)
		if err != nil {
			return nil, err
		}
		if !ok || from >= until || now >= until {
			continue
		}
		if now < from {
			if err := t.schedule(st, from, e.Row, e.Weight); err != nil {
				return nil, err
			}
		} else {
			out = append(out, e)
		}
		if until != Never {
			if err := t.schedule(st, until, e.Row, -e.Weight); err != nil {
				return nil, err
			}
		}
	}
	if !hasLast || now != last {
		if err := st.Set(t.lastKey(), binary.BigEndian.AppendUint64(nil, uint64(now))); err != nil {
			return nil, err
		}
	}
	return zset.Consolidate(out)
}

// validity returns the row's [from, until); ok is false when a bound is
// NULL for it.
func (t *TemporalFilter) validity(row zset.Row) (from, until int64, ok bool, err error) {
	from, until = Always, Never
	for i := range t.Lower {
		th, ok, err := t.Lower[i].Threshold(row)
		if err != nil || !ok {
			return 0, 0, false, err
		}
		from = max(from, th)
	}
	for i := range t.Upper {
		th, ok, err := t.Upper[i].Threshold(row)
		if err != nil || !ok {
			return 0, 0, false, err
		}
		until = min(until, th)
	}
	return from, until, true, nil
}

// schedule adds w to row's change at time at.
func (t *TemporalFilter) schedule(st state.Store, at int64, row zset.Row, w int64) error {
	k := t.scheduleKey(at, row)
	v, ok, err := st.Get(k)
	if err != nil {
		return err
	}
	if ok {
		old, _, err := readWeight(v)
		if err != nil {
			return err
		}
		w += old
	}
	if w == 0 {
		if ok {
			return st.Delete(k)
		}
		return nil
	}
	return st.Set(k, appendWeight(nil, w))
}

// due removes from the schedule the changes whose time is at most now
// and returns them.
func (t *TemporalFilter) due(ctx context.Context, st state.Store, now int64) (zset.Batch, error) {
	lo := t.schedulePrefix()
	hi := binary.BigEndian.AppendUint64(t.schedulePrefix(), uint64(now)^(1<<63))
	hi = state.PrefixEnd(hi)
	var out zset.Batch
	var keys [][]byte
	var derr error
	err := st.Scan(lo, hi, func(k, v []byte) bool {
		row, err := zset.DecodeRow(k[len(lo)+8:])
		if err != nil {
			derr = err
			return false
		}
		w, _, err := readWeight(v)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, zset.Entry{Row: row, Weight: w})
		keys = append(keys, append([]byte(nil), k...))
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		if err := Interrupted(ctx, i); err != nil {
			return nil, err
		}
		if err := st.Delete(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NextDue returns the time of the first scheduled change, if any.
func (t *TemporalFilter) NextDue(r state.Reader) (int64, bool, error) {
	lo := t.schedulePrefix()
	var at int64
	found := false
	err := r.Scan(lo, state.PrefixEnd(lo), func(k, _ []byte) bool {
		if len(k) >= len(lo)+8 {
			at = int64(binary.BigEndian.Uint64(k[len(lo):]) ^ (1 << 63))
			found = true
		}
		return false
	})
	return at, found, err
}
