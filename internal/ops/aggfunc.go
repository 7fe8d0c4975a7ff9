package ops

import (
	"bytes"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// aggFunc is an aggregate function.
type aggFunc uint8

const (
	fnCount aggFunc = iota // count(*) (no argument) or count(x)
	fnSum
	fnAvg
	fnMin
	fnMax
	fnBoolAnd
	fnBoolOr
	fnStringAgg
	fnVarSamp
	fnVarPop
	fnStddevSamp
	fnStddevPop
	fnArrayAgg
	fnPercentileCont // ordered-set aggregates (aggorderedset.go)
	fnPercentileDisc
	fnMode
	fnBitAnd // bitwise aggregates (aggbits.go)
	fnBitOr
	fnBitXor
	fnRank // hypothetical-set aggregates (agghypothetical.go)
	fnDenseRank
	fnPercentRank
	fnCumeDist
)

var aggFuncs = map[string]aggFunc{
	"count": fnCount, "sum": fnSum, "avg": fnAvg, "min": fnMin, "max": fnMax,
	"bool_and": fnBoolAnd, "bool_or": fnBoolOr, "every": fnBoolAnd,
	"string_agg": fnStringAgg, "var_samp": fnVarSamp, "variance": fnVarSamp, "var_pop": fnVarPop,
	"stddev_samp": fnStddevSamp, "stddev": fnStddevSamp, "stddev_pop": fnStddevPop,
	"array_agg":       fnArrayAgg,
	"percentile_cont": fnPercentileCont, "percentile_disc": fnPercentileDisc, "mode": fnMode,
	"bit_and": fnBitAnd, "bit_or": fnBitOr, "bit_xor": fnBitXor,
	"rank": fnRank, "dense_rank": fnDenseRank, "percent_rank": fnPercentRank, "cume_dist": fnCumeDist,
}

// ordered reports whether the aggregate keeps its group's input in order
// (string_agg, array_agg: aggordered.go).
func (s *aggSpec) ordered() bool { return s.fn == fnStringAgg || s.fn == fnArrayAgg }

// orderedSet reports whether the aggregate is an ordered-set aggregate
// (percentile_cont, percentile_disc, mode: aggorderedset.go).
func (s *aggSpec) orderedSet() bool {
	return s.fn == fnPercentileCont || s.fn == fnPercentileDisc || s.fn == fnMode
}

// bitwise reports whether the aggregate is bit_and, bit_or or bit_xor.
func (s *aggSpec) bitwise() bool { return s.fn == fnBitAnd || s.fn == fnBitOr || s.fn == fnBitXor }

// accKind is how a SUM or AVG accumulates its argument.
type accKind uint8

const (
	accNone     accKind = iota
	accInt              // SMALLINT, INTEGER, BIGINT: exact 128-bit sum
	accNumeric          // NUMERIC: exact sum, counts per scale, counts of NaN and ±Infinity
	accFloat            // REAL, DOUBLE PRECISION: exact sum of the binary values, counts of NaN and ±Infinity
	accInterval         // INTERVAL: field-wise sums
)

// fields is the number of state-row fields an aggregate keeps.
func (s *aggSpec) fields() int {
	switch s.fn {
	case fnCount, fnMin, fnMax, fnStringAgg, fnArrayAgg:
		return 1 // count; or the current extreme, string or array
	case fnBoolAnd, fnBoolOr:
		return 2 // trues, falses
	case fnPercentileCont, fnPercentileDisc, fnMode:
		return 4 // rows, non-NULL values, the current result, the cursors
	case fnBitAnd, fnBitOr, fnBitXor:
		return 2 // non-NULL count, the value or the per-bit counts
	case fnRank, fnDenseRank, fnPercentRank, fnCumeDist:
		return 3 // rows, the current result, the hypothetical row's cursor
	}
	if s.stats() {
		return s.statsFields()
	}
	switch s.acc {
	case accInt:
		return 3 // count, sum high word, sum low word
	case accNumeric:
		return 6 // count, sum, scales, +inf, -inf, NaN
	case accFloat:
		return 5 // count, sum, +inf, -inf, NaN
	}
	return 4 // count, months, days, microseconds
}

// aggSpec is one aggregate call, resolved.
type aggSpec struct {
	call   plan.AggCall
	fn     aggFunc
	acc    accKind
	result types.Type
	// arranged aggregates (DISTINCT, MIN, MAX) keep (group, value) → count
	// under prefix.
	arranged bool
	// insertOnly MIN and MAX keep the extreme alone: their input never
	// retracts (Aggregate.InsertOnly).
	insertOnly bool
	prefix     *bucketed
	// modePrefix, for mode(), prefixes its index of each group's value
	// classes by count (aggorderedset.go).
	modePrefix *bucketed
	off        int             // first field in the state row
	div        *types.Operator // AVG's final division
	// lerp holds, for percentile_cont over interval, the operators
	// PostgreSQL's interpolation uses: hi − lo, × fraction, + lo.
	lerp [3]*types.Operator
}

func newAggSpec(call plan.AggCall) (aggSpec, error) {
	fn, ok := aggFuncs[call.Func]
	if !ok {
		return aggSpec{}, errs.Newf(errs.FeatureNotSupported, "aggregate function %s is not supported yet", call.Func)
	}
	s := aggSpec{call: call, fn: fn, result: call.Type}
	if call.Arg == nil {
		if fn != fnCount {
			return aggSpec{}, errs.Newf(errs.UndefinedFunction, "function %s(*) does not exist", call.Func)
		}
		s.result = types.Of(types.Int8)
		return s, nil
	}
	arg := call.Arg.Type()
	if fn == fnStringAgg || fn == fnArrayAgg {
		s.arranged = true
		return s, nil
	}
	if s.orderedSet() {
		return s, s.initOrderedSet()
	}
	if s.hypothetical() {
		s.arranged = true
		return s, nil
	}
	if fn != fnCount || s.result.ID == types.Unknown {
		name := call.Func
		if name == "every" {
			name = "bool_and"
		}
		rt, err := types.AggregateType(name, arg)
		if err != nil {
			return aggSpec{}, err
		}
		if s.result.ID == types.Unknown {
			s.result = rt
		}
	}
	s.arranged = call.Distinct || fn == fnMin || fn == fnMax
	if fn != fnSum && fn != fnAvg && !s.stats() {
		return s, nil
	}
	switch arg.ID {
	case types.Int2, types.Int4, types.Int8:
		s.acc = accInt
	case types.Numeric:
		s.acc = accNumeric
	case types.Float4, types.Float8:
		s.acc = accFloat
	case types.Interval:
		s.acc = accInterval
	default:
		return aggSpec{}, errs.Newf(errs.FeatureNotSupported, "%s(%s) is not supported yet", call.Func, arg)
	}
	if fn == fnAvg {
		var err error
		switch s.acc {
		case accInt, accNumeric:
			s.div, err = types.ResolveBinary("/", types.Of(types.Numeric), types.Of(types.Numeric))
		case accInterval:
			s.div, err = types.ResolveBinary("/", types.Of(types.Interval), types.Of(types.Float8))
		}
		if err != nil {
			return aggSpec{}, errs.Newf(errs.FeatureNotSupported, "avg(%s) is not supported yet", arg)
		}
	}
	return s, nil
}

// accum is one aggregate's state for one group, decoded.
type accum struct {
	n               int64 // rows counted; non-NULL inputs for SUM and AVG
	i               int128
	d               apd.Decimal
	scales          []scaleCount
	pinf, ninf, nan int64
	iv              [3]int64    // interval months, days, microseconds
	sq              apd.Decimal // sum of squares (variance family)
	ext             types.Value
	t, f            int64
	rows            int64        // ordered-set aggregates: rows taken, NULL values included
	x               int64        // bit_xor's value; bit_and's, bit_or's over insert-only input
	ones            [64]int64    // bit_and, bit_or: count of values with each bit set
	cursors         []rankCursor // percentile_cont, percentile_disc: one per fraction
	dirty           bool         // the MIN/MAX arrangement changed this step
}

func (a *accum) reset() {
	*a = accum{scales: a.scales[:0], cursors: a.cursors[:0]}
}

func addCount(n *int64, w int64) error {
	v, err := zset.AddWeight(*n, w)
	*n = v
	return err
}

// add folds w copies of the non-NULL value v into a.
func (s *aggSpec) add(a *accum, v types.Value, w int64) error {
	if s.stats() {
		return s.addStats(a, v, w)
	}
	if s.bitwise() {
		return s.addBits(a, v, w)
	}
	switch s.fn {
	case fnCount:
		return addCount(&a.n, w)
	case fnBoolAnd, fnBoolOr:
		if v.Bool() {
			return addCount(&a.t, w)
		}
		return addCount(&a.f, w)
	case fnMin, fnMax:
		if s.insertOnly {
			return s.addExtreme(a, v, w)
		}
		a.dirty = true
		return nil
	}
	if err := addCount(&a.n, w); err != nil {
		return err
	}
	switch s.acc {
	case accInt:
		sum, ok := a.i.add(mul128(v.Int(), w))
		if !ok {
			return errs.New(errs.NumericOutOfRange, "numeric value out of range")
		}
		a.i = sum
	case accNumeric:
		d := v.Decimal()
		switch d.Form {
		case apd.Finite:
			var err error
			if a.scales, err = addScale(a.scales, scaleOf(d), w); err != nil {
				return err
			}
			return addScaled(&a.d, d, w)
		case apd.Infinite:
			if d.Negative {
				return addCount(&a.ninf, w)
			}
			return addCount(&a.pinf, w)
		default:
			return addCount(&a.nan, w)
		}
	case accFloat:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return addCount(&a.nan, w)
		case math.IsInf(f, 1):
			return addCount(&a.pinf, w)
		case math.IsInf(f, -1):
			return addCount(&a.ninf, w)
		}
		var x apd.Decimal
		floatDecimal(&x, f)
		return addScaled(&a.d, &x, w)
	case accInterval:
		iv := v.Interval()
		for k, x := range [3]int64{int64(iv.Months), int64(iv.Days), iv.Micros} {
			p := mul128(x, w)
			sum, ok := int128Of(a.iv[k]).add(p)
			r, fits := sum.int64()
			if !ok || !fits {
				return errs.New(errs.DatetimeOverflow, "interval out of range")
			}
			a.iv[k] = r
		}
	}
	return nil
}

// special returns the sum of a NUMERIC or float accumulator's NaN and
// infinite inputs, with ok false when there are none.
func (a *accum) special() (nan bool, inf int, ok bool) {
	switch {
	case a.nan > 0 || (a.pinf > 0 && a.ninf > 0):
		return true, 0, true
	case a.pinf > 0:
		return false, 1, true
	case a.ninf > 0:
		return false, -1, true
	}
	return false, 0, false
}

func specialValue(nan bool, inf int, id types.TypeID) types.Value {
	if id == types.Numeric {
		d := new(apd.Decimal)
		if nan {
			d.Form = apd.NaN
		} else {
			d.Form = apd.Infinite
			d.Negative = inf < 0
		}
		return types.MakeNumeric(d)
	}
	f := math.NaN()
	if !nan {
		f = math.Inf(inf)
	}
	return floatOf(f, id)
}

func floatOf(f float64, id types.TypeID) types.Value {
	if id == types.Float4 {
		return types.MakeFloat4(float32(f))
	}
	return types.MakeFloat8(f)
}

// value computes the aggregate's result from its state, as PostgreSQL's
// final function would.
func (s *aggSpec) value(a *accum) (types.Value, error) {
	if s.stats() {
		return s.statsValue(a)
	}
	if s.bitwise() {
		return s.bitsValue(a), nil
	}
	switch s.fn {
	case fnCount:
		return types.MakeInt(types.Int8, a.n), nil
	case fnMin, fnMax, fnStringAgg, fnArrayAgg, fnPercentileCont, fnPercentileDisc, fnMode:
		return a.ext, nil
	case fnRank, fnDenseRank, fnPercentRank, fnCumeDist:
		if a.rows == 0 {
			return s.hypotheticalEmpty(), nil
		}
		return a.ext, nil
	case fnBoolAnd:
		if a.t+a.f == 0 {
			return types.Null, nil
		}
		return types.MakeBool(a.f == 0), nil
	case fnBoolOr:
		if a.t+a.f == 0 {
			return types.Null, nil
		}
		return types.MakeBool(a.t > 0), nil
	}
	if a.n == 0 {
		return types.Null, nil // SUM and AVG of no non-NULL input
	}
	var sum types.Value
	switch s.acc {
	case accInt:
		if s.fn == fnSum && s.result.ID == types.Int8 {
			v, ok := a.i.int64()
			if !ok {
				return types.Null, errs.New(errs.NumericOutOfRange, "bigint out of range")
			}
			return types.MakeInt(types.Int8, v), nil
		}
		sum = types.MakeNumeric(a.i.decimal())
	case accNumeric:
		if nan, inf, ok := a.special(); ok {
			return specialValue(nan, inf, types.Numeric), nil
		}
		d := new(apd.Decimal).Set(&a.d)
		rescale(d, maxScale(a.scales))
		sum = types.MakeNumeric(d)
	case accFloat:
		if nan, inf, ok := a.special(); ok {
			return specialValue(nan, inf, s.result.ID), nil
		}
		bitSize := 64
		if s.fn == fnSum && s.result.ID == types.Float4 {
			bitSize = 32
		}
		f, err := decimalFloat(&a.d, bitSize)
		if err != nil {
			return types.Null, err
		}
		if s.fn == fnAvg {
			f /= float64(a.n)
		}
		return floatOf(f, s.result.ID), nil
	case accInterval:
		if a.iv[0] != int64(int32(a.iv[0])) || a.iv[1] != int64(int32(a.iv[1])) {
			return types.Null, errs.New(errs.DatetimeOverflow, "interval out of range")
		}
		sum = types.MakeInterval(types.IntervalValue{Months: int32(a.iv[0]), Days: int32(a.iv[1]), Micros: a.iv[2]})
		if s.fn == fnSum {
			return sum, nil
		}
		return s.div.Eval(sum, types.MakeFloat8(float64(a.n)))
	}
	if s.fn == fnSum {
		return types.Cast(sum, s.result, false)
	}
	avg, err := s.div.Eval(sum, types.MakeNumeric(apd.New(a.n, 0)))
	if err != nil {
		return types.Null, err
	}
	if s.result.ID != types.Numeric {
		return types.Cast(avg, s.result, false)
	}
	return avg, nil
}

// load decodes the aggregate's fields of a state row into a.
func (s *aggSpec) load(a *accum, f zset.Row) error {
	a.reset()
	if s.stats() {
		return s.loadStats(a, f)
	}
	if s.bitwise() {
		return s.loadBits(a, f)
	}
	switch s.fn {
	case fnCount:
		a.n = f[0].Int()
		return nil
	case fnMin, fnMax, fnStringAgg, fnArrayAgg:
		a.ext = f[0]
		return nil
	case fnBoolAnd, fnBoolOr:
		a.t, a.f = f[0].Int(), f[1].Int()
		return nil
	case fnPercentileCont, fnPercentileDisc, fnMode:
		a.rows, a.n, a.ext = f[0].Int(), f[1].Int(), f[2]
		var err error
		a.cursors, err = decodeCursors(a.cursors, f[3])
		return err
	case fnRank, fnDenseRank, fnPercentRank, fnCumeDist:
		a.rows, a.ext = f[0].Int(), f[1]
		var err error
		a.cursors, err = decodeCursors(a.cursors, f[2])
		return err
	}
	a.n = f[0].Int()
	switch s.acc {
	case accInt:
		a.i = int128{hi: f[1].Int(), lo: uint64(f[2].Int())}
	case accNumeric:
		a.d.Set(f[1].Decimal())
		var err error
		if a.scales, err = decodeScales(a.scales, f[2]); err != nil {
			return err
		}
		a.pinf, a.ninf, a.nan = f[3].Int(), f[4].Int(), f[5].Int()
	case accFloat:
		a.d.Set(f[1].Decimal())
		a.pinf, a.ninf, a.nan = f[2].Int(), f[3].Int(), f[4].Int()
	case accInterval:
		a.iv = [3]int64{f[1].Int(), f[2].Int(), f[3].Int()}
	}
	return nil
}

func i8(n int64) types.Value { return types.MakeInt(types.Int8, n) }

// store appends the aggregate's fields to a state row.
func (s *aggSpec) store(row zset.Row, a *accum) zset.Row {
	if s.stats() {
		return s.storeStats(row, a)
	}
	if s.bitwise() {
		return s.storeBits(row, a)
	}
	switch s.fn {
	case fnCount:
		return append(row, i8(a.n))
	case fnMin, fnMax, fnStringAgg, fnArrayAgg:
		return append(row, a.ext)
	case fnBoolAnd, fnBoolOr:
		return append(row, i8(a.t), i8(a.f))
	case fnPercentileCont, fnPercentileDisc, fnMode:
		return append(row, i8(a.rows), i8(a.n), a.ext, encodeCursors(a.cursors))
	case fnRank, fnDenseRank, fnPercentRank, fnCumeDist:
		return append(row, i8(a.rows), a.ext, encodeCursors(a.cursors))
	}
	row = append(row, i8(a.n))
	switch s.acc {
	case accInt:
		return append(row, i8(a.i.hi), i8(int64(a.i.lo)))
	case accNumeric:
		return append(row, types.MakeNumeric(new(apd.Decimal).Set(&a.d)), encodeScales(a.scales), i8(a.pinf), i8(a.ninf), i8(a.nan))
	case accFloat:
		return append(row, types.MakeNumeric(new(apd.Decimal).Set(&a.d)), i8(a.pinf), i8(a.ninf), i8(a.nan))
	}
	return append(row, i8(a.iv[0]), i8(a.iv[1]), i8(a.iv[2]))
}

// stateName names the algebraic state the aggregate keeps, for EXPLAIN.
func (s *aggSpec) stateName() string {
	switch s.fn {
	case fnCount:
		return "count"
	case fnMin:
		return "min"
	case fnMax:
		return "max"
	case fnBoolAnd, fnBoolOr:
		return "true/false counts"
	case fnStringAgg:
		return "string"
	case fnArrayAgg:
		return "array"
	case fnPercentileCont, fnPercentileDisc, fnMode:
		return "row/value counts,result,cursors"
	case fnRank, fnDenseRank, fnPercentRank, fnCumeDist:
		return "rows,result,cursors"
	case fnBitAnd, fnBitOr:
		if s.insertOnly {
			return "bits"
		}
		return "bit counts"
	case fnBitXor:
		return "bits"
	}
	if s.stats() {
		return "sum,sum of squares"
	}
	return "sum"
}

// classPrefix appends the prefix of the arrangement keys of value v's
// equality class in the group: prefix | gkey | EncodeKey(v) | repSep.
func (s *aggSpec) classPrefix(dst, gkey []byte, v types.Value) []byte {
	dst = append(append(dst, s.prefix.of(gkey)...), gkey...)
	return append(zset.EncodeKey(dst, v), repSep)
}

func aggPrefix(prefix Prefix, i int) Prefix {
	return prefix.With('a', byte(i>>8), byte(i))
}

// addExtreme folds an inserted value into an insert-only MIN or MAX. It
// keeps the value the arrangement would give: the least (MIN) or greatest
// (MAX) by key encoding, and among values with equal keys (NUMERIC 1.0
// and 1.00) the first (MIN) or last (MAX) by row encoding.
func (s *aggSpec) addExtreme(a *accum, v types.Value, w int64) error {
	if w <= 0 {
		return errs.New(errs.Internal, "internal error: a retraction reached a MIN or MAX over insert-only input")
	}
	if a.ext.IsNull() {
		a.ext = v
		return nil
	}
	c := compareEncoded(v, a.ext)
	if c != 0 && (c < 0) == (s.fn == fnMin) {
		a.ext = v
	}
	return nil
}

// compareEncoded orders two values by key encoding, then by row
// encoding.
func compareEncoded(x, y types.Value) int {
	var kx, ky [64]byte
	if c := bytes.Compare(zset.EncodeKey(kx[:0], x), zset.EncodeKey(ky[:0], y)); c != 0 {
		return c
	}
	return bytes.Compare(zset.EncodeRow(kx[:0], zset.Row{x}), zset.EncodeRow(ky[:0], zset.Row{y}))
}
