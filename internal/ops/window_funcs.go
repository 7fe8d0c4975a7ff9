package ops

import (
	"bytes"
	"math"
	"math/bits"
	"sort"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// windowKind is a window function, resolved.
type windowKind uint8

const (
	wfRowNumber windowKind = iota
	wfRank
	wfDenseRank
	wfPercentRank
	wfCumeDist
	wfNtile
	wfLag
	wfLead
	wfFirstValue
	wfLastValue
	wfNthValue
	wfAggregate // invertible: count, sum, avg, bool_and, bool_or
	wfMin
	wfMax
)

var windowKinds = map[string]windowKind{
	"row_number": wfRowNumber, "rank": wfRank, "dense_rank": wfDenseRank,
	"percent_rank": wfPercentRank, "cume_dist": wfCumeDist, "ntile": wfNtile,
	"lag": wfLag, "lead": wfLead, "first_value": wfFirstValue,
	"last_value": wfLastValue, "nth_value": wfNthValue,
	"min": wfMin, "max": wfMax,
}

// windowFn is one window function call, resolved.
type windowFn struct {
	call plan.WindowFunc
	kind windowKind
	agg  aggSpec // wfAggregate
	// rangeKey is set for a RANGE frame with offsets.
	rangeKey *rangeKey
}

func newWindowFn(call plan.WindowFunc) (windowFn, error) {
	f := windowFn{call: call}
	if k, ok := windowKinds[call.Func]; ok {
		f.kind = k
	} else {
		f.kind = wfAggregate
		ac := plan.AggCall{Func: call.Func, Filter: call.Filter, Type: call.Type}
		if len(call.Args) > 0 {
			ac.Arg = call.Args[0]
		}
		spec, err := newAggSpec(ac)
		if err != nil {
			return f, err
		}
		f.agg = spec
	}
	want := map[windowKind]int{wfNtile: 1, wfLag: 3, wfLead: 3, wfFirstValue: 1, wfLastValue: 1, wfNthValue: 2, wfMin: 1, wfMax: 1}
	if n, ok := want[f.kind]; ok && len(call.Args) != n {
		return f, errs.Newf(errs.Internal, "window function %s has %d arguments, want %d", call.Func, len(call.Args), n)
	}
	return f, nil
}

// evaluate computes every function's value at every position from from
// on. Each function's positions count as work on wk, looked at before the
// function is evaluated.
func (p *windowPartition) evaluate(wk *work, fns []windowFn, from int) error {
	for len(p.vals) < len(fns) {
		p.vals = append(p.vals, nil)
	}
	p.vals = p.vals[:len(fns)]
	for f := range fns {
		if err := wk.ticks(p.n - min(from, p.n)); err != nil {
			return err
		}
		p.vals[f] = resize(p.vals[f], p.n)
		if err := p.evalFn(&fns[f], p.vals[f], min(from, p.n)); err != nil {
			return err
		}
	}
	return nil
}

// dependsOnAll stands for a position past every row: the output depends on
// the whole partition (its size, or rows up to its end).
const dependsOnAll = math.MaxInt

// firstAffected returns the first position whose output may differ once
// the rows from position changed on change: the outputs before it depend
// only on the rows before changed, which the old and the new partition
// share. p is the old partition.
func (p *windowPartition) firstAffected(fns []windowFn, changed int) int {
	from := changed
	for f := range fns {
		fn := &fns[f]
		// The last position an output depends on never decreases with the
		// position.
		i := sort.Search(from, func(i int) bool { return p.lastDependency(fn, i) >= changed })
		from = min(from, i)
	}
	return from
}

// lastDependency returns the last position whose row the output of f at
// position i depends on (counting the row that ends a peer group, which
// says where the group ends), or dependsOnAll.
func (p *windowPartition) lastDependency(f *windowFn, i int) int {
	g := p.group[i]
	groups := len(p.groupStart) - 1
	// groupEnd is the first position after group g: reading it tells that
	// the group ends; the last group ends with the partition.
	groupEnd := func(g int) int {
		if g+1 >= groups {
			return dependsOnAll
		}
		return p.groupStart[g+1]
	}
	switch f.kind {
	case wfRowNumber, wfRank, wfDenseRank:
		return i
	case wfPercentRank, wfCumeDist, wfNtile:
		return dependsOnAll
	case wfLag, wfLead:
		k, ok := f.call.Args[1].(*plan.Const)
		if !ok || k.Val.IsNull() {
			return dependsOnAll
		}
		off := int(k.Val.Int())
		if f.kind == wfLag {
			off = -off
		}
		return max(i, i+off)
	}
	fr := &f.call.Frame
	if hasRangeOffset(fr) {
		return dependsOnAll
	}
	d := i
	switch fr.End.Kind {
	case plan.UnboundedFollowing:
		return dependsOnAll
	case plan.OffsetFollowing:
		if fr.Mode == plan.FrameGroups {
			if int64(g)+fr.End.Offset+1 >= int64(groups) {
				return dependsOnAll
			}
			d = p.groupStart[g+int(fr.End.Offset)+1]
		} else {
			d = int(min(satAdd(int64(i), fr.End.Offset), math.MaxInt32))
		}
	case plan.CurrentRow:
		if fr.Mode != plan.FrameRows {
			d = max(d, groupEnd(g))
		}
	case plan.OffsetPreceding:
		// The end of group g-k is before position i, except for 0
		// PRECEDING, the current group's end.
		if fr.Mode == plan.FrameGroups && fr.End.Offset == 0 {
			d = max(d, groupEnd(g))
		}
	}
	if fr.Exclude == plan.ExcludeGroup || fr.Exclude == plan.ExcludeTies {
		d = max(d, groupEnd(g))
	}
	return d
}

func i8v(n int) types.Value { return types.MakeInt(types.Int8, int64(n)) }

// evalFn computes f's value at the positions from from on into out.
func (p *windowPartition) evalFn(f *windowFn, out []types.Value, from int) error {
	n := p.n
	p.rangeFor = nil
	if f.rangeKey != nil && f.call.UsesFrame() {
		if err := p.rangeFrames(&f.call.Frame, f.rangeKey); err != nil {
			return err
		}
		p.rangeFor = &f.call.Frame
	}
	switch f.kind {
	case wfRowNumber:
		for i := from; i < n; i++ {
			out[i] = i8v(i + 1)
		}
	case wfRank:
		for i := from; i < n; i++ {
			out[i] = i8v(p.groupStart[p.group[i]] + 1)
		}
	case wfDenseRank:
		for i := from; i < n; i++ {
			out[i] = i8v(p.group[i] + 1)
		}
	case wfPercentRank:
		for i := from; i < n; i++ {
			r := 0.0
			if n > 1 {
				r = float64(p.groupStart[p.group[i]]) / float64(n-1)
			}
			out[i] = types.MakeFloat8(r)
		}
	case wfCumeDist:
		for i := from; i < n; i++ {
			out[i] = types.MakeFloat8(float64(p.groupStart[p.group[i]+1]) / float64(n))
		}
	case wfNtile:
		return p.ntile(f, out) // depends on the partition's size: from is 0
	case wfLag, wfLead:
		return p.lagLead(f, out, from)
	case wfFirstValue, wfLastValue, wfNthValue:
		return p.frameValue(f, out, from)
	case wfMin, wfMax:
		return p.extreme(f, out, from)
	default:
		return p.aggregate(f, out, from)
	}
	return nil
}

// ntile divides the partition into n buckets as PostgreSQL does: the
// first total%n buckets get one row more. The argument does not depend on
// the row (the binder ensures it), so it is evaluated once.
func (p *windowPartition) ntile(f *windowFn, out []types.Value) error {
	if p.n == 0 {
		return nil
	}
	first, err := p.row(0)
	if err != nil {
		return err
	}
	v, err := f.call.Args[0].Eval(first)
	if err != nil {
		return err
	}
	if v.IsNull() {
		for i := range out {
			out[i] = types.Null
		}
		return nil
	}
	buckets := v.Int()
	if buckets <= 0 {
		return errs.New(errs.InvalidNtileArgument, "argument of ntile must be greater than zero")
	}
	total := int64(p.n)
	boundary := total / buckets
	remainder := int64(0)
	if boundary <= 0 {
		boundary = 1
	} else if remainder = total % buckets; remainder != 0 {
		boundary++
	}
	tile, inBucket := int64(1), int64(0)
	for i := range out {
		inBucket++
		if boundary < inBucket {
			if remainder != 0 && tile == remainder {
				remainder = 0
				boundary--
			}
			tile++
			inBucket = 1
		}
		out[i] = types.MakeInt(types.Int4, tile)
	}
	return nil
}

// lagLead evaluates lag(value, offset, default) and lead(...): the value
// at offset rows before (after) the current row in the partition, else the
// default evaluated at the current row; a NULL offset gives NULL.
func (p *windowPartition) lagLead(f *windowFn, out []types.Value, from int) error {
	val, off, def := f.call.Args[0], f.call.Args[1], f.call.Args[2]
	for i := from; i < p.n; i++ {
		cur, err := p.row(i)
		if err != nil {
			return err
		}
		o, err := off.Eval(cur)
		if err != nil {
			return err
		}
		if o.IsNull() {
			out[i] = types.Null
			continue
		}
		t := int64(i) - o.Int()
		if f.kind == wfLead {
			t = int64(i) + o.Int()
		}
		if t >= 0 && t < int64(p.n) {
			var target zset.Row
			if target, err = p.row(int(t)); err == nil {
				out[i], err = val.Eval(target)
			}
		} else {
			out[i], err = def.Eval(cur)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// frame returns the frame of position i as [s, t): the rows the frame's
// bounds reach, before any exclusion. Both ends never decrease as i grows.
func (p *windowPartition) frame(fr *plan.Frame, i int) (s, t int) {
	if p.rangeFor == fr {
		s, t = p.rangeS[i], p.rangeT[i]
	} else {
		s, t = p.frameBounds(fr, i)
	}
	return s, max(s, t)
}

// frameBounds computes the frame of position i for bounds that count rows
// or peer groups (RANGE offsets are rangeFrames').
func (p *windowPartition) frameBounds(fr *plan.Frame, i int) (s, t int) {
	g := p.group[i]
	groups := len(p.groupStart) - 1
	switch fr.Start.Kind {
	case plan.UnboundedPreceding:
		s = 0
	case plan.OffsetPreceding:
		if fr.Mode == plan.FrameGroups {
			s = p.groupStart[max(int64(g)-fr.Start.Offset, 0)]
		} else {
			s = int(max(int64(i)-fr.Start.Offset, 0))
		}
	case plan.CurrentRow:
		s = i
		if fr.Mode != plan.FrameRows {
			s = p.groupStart[g]
		}
	case plan.OffsetFollowing:
		if fr.Mode == plan.FrameGroups {
			s = p.groupStart[min(satAdd(int64(g), fr.Start.Offset), int64(groups))]
		} else {
			s = int(min(satAdd(int64(i), fr.Start.Offset), int64(p.n)))
		}
	default:
		s = p.n
	}
	switch fr.End.Kind {
	case plan.UnboundedPreceding:
		t = 0
	case plan.OffsetPreceding:
		if fr.Mode == plan.FrameGroups {
			t = 0
			if e := int64(g) - fr.End.Offset; e >= 0 {
				t = p.groupStart[e+1]
			}
		} else {
			t = int(max(int64(i)-fr.End.Offset+1, 0))
		}
	case plan.CurrentRow:
		t = i + 1
		if fr.Mode != plan.FrameRows {
			t = p.groupStart[g+1]
		}
	case plan.OffsetFollowing:
		if fr.Mode == plan.FrameGroups {
			t = p.groupStart[min(satAdd(int64(g), fr.End.Offset), int64(groups-1))+1]
		} else {
			t = int(min(satAdd(int64(i)+1, fr.End.Offset), int64(p.n)))
		}
	default:
		t = p.n
	}
	return s, t
}

// excluded returns the positions of [s, t) that the frame's exclusion
// removes for position i, as [xs, xe) minus keep (keep is -1 or i, which
// EXCLUDE TIES keeps).
func (p *windowPartition) excluded(fr *plan.Frame, i int) (xs, xe, keep int) {
	switch fr.Exclude {
	case plan.ExcludeCurrentRow:
		return i, i + 1, -1
	case plan.ExcludeGroup:
		g := p.group[i]
		return p.groupStart[g], p.groupStart[g+1], -1
	case plan.ExcludeTies:
		g := p.group[i]
		return p.groupStart[g], p.groupStart[g+1], i
	}
	return 0, 0, -1
}

// ranges returns the frame of position i after exclusion as up to three
// disjoint ranges, in order.
func (p *windowPartition) ranges(fr *plan.Frame, i int, dst [][2]int) [][2]int {
	s, t := p.frame(fr, i)
	xs, xe, keep := p.excluded(fr, i)
	dst = dst[:0]
	add := func(a, b int) {
		if a < b {
			dst = append(dst, [2]int{a, b})
		}
	}
	if xs >= xe {
		add(s, t)
		return dst
	}
	add(s, min(t, xs))
	if keep >= s && keep < t {
		add(keep, keep+1)
	}
	add(max(s, xe), t)
	return dst
}

// frameValue evaluates first_value, last_value and nth_value.
func (p *windowPartition) frameValue(f *windowFn, out []types.Value, from int) error {
	fr := &f.call.Frame
	var rs [][2]int
	for i := from; i < p.n; i++ {
		rs = p.ranges(fr, i, rs)
		pos := -1
		switch f.kind {
		case wfFirstValue:
			if len(rs) > 0 {
				pos = rs[0][0]
			}
		case wfLastValue:
			if len(rs) > 0 {
				pos = rs[len(rs)-1][1] - 1
			}
		default:
			cur, err := p.row(i)
			if err != nil {
				return err
			}
			nv, err := f.call.Args[1].Eval(cur)
			if err != nil {
				return err
			}
			if nv.IsNull() {
				out[i] = types.Null
				continue
			}
			nth := nv.Int()
			if nth <= 0 {
				return errs.New(errs.InvalidNthArgument, "argument of nth_value must be greater than zero")
			}
			for _, r := range rs {
				if size := int64(r[1] - r[0]); nth <= size {
					pos = r[0] + int(nth) - 1
					break
				} else {
					nth -= size
				}
			}
		}
		if pos < 0 {
			out[i] = types.Null
			continue
		}
		row, err := p.row(pos)
		if err != nil {
			return err
		}
		v, err := f.call.Args[0].Eval(row)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

// aggregate evaluates an invertible aggregate over each position's frame,
// sliding: a row is added when it enters the frame and removed when it
// leaves. Excluded rows are removed for the one position and added back.
func (p *windowPartition) aggregate(f *windowFn, out []types.Value, from int) error {
	args, has, err := p.arguments(f, from)
	if err != nil {
		return err
	}
	spec := &f.agg
	var acc accum
	acc.reset()
	move := func(k int, w int64) error {
		if !has[k] {
			return nil
		}
		return spec.add(&acc, args[k], w)
	}
	fr := &f.call.Frame
	as, ae := 0, 0
	for i := from; i < p.n; i++ {
		s, t := p.frame(fr, i)
		if s >= ae {
			for k := as; k < ae; k++ {
				if err := move(k, -1); err != nil {
					return err
				}
			}
			as, ae = s, s
		}
		for ; as < s; as++ {
			if err := move(as, -1); err != nil {
				return err
			}
		}
		for ; ae < t; ae++ {
			if err := move(ae, 1); err != nil {
				return err
			}
		}
		xs, xe, keep := p.excluded(fr, i)
		xs, xe = max(xs, as), min(xe, ae)
		for k := xs; k < xe; k++ {
			if k != keep {
				if err := move(k, -1); err != nil {
					return err
				}
			}
		}
		v, err := spec.value(&acc)
		if err != nil {
			return err
		}
		out[i] = v
		for k := xs; k < xe; k++ {
			if k != keep {
				if err := move(k, 1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// arguments evaluates an aggregate's argument at the positions some frame
// holds (as PostgreSQL, which evaluates it only for rows it aggregates, so
// that a row no frame reaches cannot fail the query); has reports the
// positions that count (FILTER true and, unless count(*), a non-NULL
// argument).
func (p *windowPartition) arguments(f *windowFn, from int) ([]types.Value, []bool, error) {
	args := make([]types.Value, p.n)
	has := make([]bool, p.n)
	if from >= p.n {
		return args, has, nil
	}
	// Frame bounds never decrease, so the frames from position from on
	// together span its frame's start to the last frame's end.
	lo, _ := p.frame(&f.call.Frame, from)
	_, hi := p.frame(&f.call.Frame, p.n-1)
	for i := lo; i < hi; i++ {
		row, err := p.row(i)
		if err != nil {
			return nil, nil, err
		}
		if f.call.Filter != nil {
			ok, err := isTrue(f.call.Filter, row)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		if len(f.call.Args) == 0 {
			has[i] = true
			continue
		}
		v, err := f.call.Args[0].Eval(row)
		if err != nil {
			return nil, nil, err
		}
		args[i], has[i] = v, !v.IsNull()
	}
	return args, has, nil
}

// extreme evaluates min and max over each position's frame with a sparse
// table: level l holds, for each position, the best of the 2^l positions
// from it, so any range is two lookups. Among equal values, min shows the
// smallest representation by row encoding and max the largest, as the
// grouped aggregate does.
func (p *windowPartition) extreme(f *windowFn, out []types.Value, from int) error {
	if from >= p.n {
		return nil
	}
	args, has, err := p.arguments(f, from)
	if err != nil {
		return err
	}
	// The table covers the positions from the first frame's start on.
	base, _ := p.frame(&f.call.Frame, from)
	isMax := f.kind == wfMax
	var e1, e2 []byte
	better := func(a, b int) int { // the better of positions a and b (-1: none)
		switch {
		case a < 0:
			return b
		case b < 0:
			return a
		}
		c := types.Compare(args[a], args[b])
		if c == 0 {
			e1 = zset.EncodeRow(e1[:0], zset.Row{args[a]})
			e2 = zset.EncodeRow(e2[:0], zset.Row{args[b]})
			c = bytes.Compare(e1, e2)
		}
		if (c < 0) != isMax || c == 0 {
			return a
		}
		return b
	}
	n := p.n - base
	levels := [][]int{make([]int, n)}
	for i := range n {
		levels[0][i] = -1
		if has[base+i] {
			levels[0][i] = base + i
		}
	}
	for l := 1; 1<<l <= n; l++ {
		prev, half := levels[l-1], 1<<(l-1)
		cur := make([]int, n-(1<<l)+1)
		for i := range cur {
			cur[i] = better(prev[i], prev[i+half])
		}
		levels = append(levels, cur)
	}
	query := func(a, b int) int { // best in [a, b), base <= a < b
		l := bits.Len(uint(b-a)) - 1
		return better(levels[l][a-base], levels[l][b-base-(1<<l)])
	}
	fr := &f.call.Frame
	var rs [][2]int
	for i := from; i < p.n; i++ {
		rs = p.ranges(fr, i, rs)
		best := -1
		for _, r := range rs {
			best = better(best, query(r[0], r[1]))
		}
		out[i] = types.Null
		if best >= 0 {
			out[i] = args[best]
		}
	}
	return nil
}
