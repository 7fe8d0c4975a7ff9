package runtime

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Reads by key. A relation's rows are stored in the order of their key
// (docs/format/storage.md): the primary-key columns of a table that has
// one; the whole row, column by column, for a table without one and for a
// materialized view. A predicate that fixes the leading columns of that
// order with = or IN and bounds the next one with <, <=, >, >= (BETWEEN
// binds as both) therefore holds only for rows in a few key ranges, and a
// read of those ranges finds every row the predicate can keep.
//
// The ranges only bound the candidates: the predicate is still evaluated
// on each row read, so a range may hold more rows than the predicate
// keeps, never fewer. Comparisons made in another type than the column's
// (bigint = integer, a bigint column cast to numeric against 12.5, an
// integer column cast to double precision) are translated into bounds on
// the column's own values, since a key holds the value in the column's
// type: = 12.5 on an integer column holds for no row, < 12.5 is <= 12.
// NULL satisfies no comparison, so a bound never reaches the keys of NULLs
// (which sort after every value), and = NULL holds for no row.

// keyCond is one conjunct of a predicate that bounds a key column: the
// column at position pos of the key compared by op with the constants
// args (an IN list is op "=" with several args, any of which may match).
type keyCond struct {
	pos  int
	op   string
	args []plan.Expr
	text string // the condition as EXPLAIN shows it
}

// maxKeyRanges bounds the ranges one read is split into: equality sets
// whose product has more combinations are read as the range from their
// least to their greatest value.
const maxKeyRanges = 4096

// fullScansOnly turns reads by key off, so that tests can compare what
// they return with what full scans return.
var fullScansOnly atomic.Bool

// keyRange is the range [lo, hi) of order keys (keys.go): stored keys
// without their bucket. bucket is the one bucket that holds its rows, when
// every order key in it begins with the same routing key; allBuckets
// when it spans them.
type keyRange struct {
	lo, hi []byte
	bucket int
}

const allBuckets = -1

// routeColumns is how many of o's key columns (keyColumns) are its
// routing key.
func (o *object) routeColumns() int {
	switch {
	case len(o.pk) > 0:
		return len(o.pk)
	case o.route > 0:
		return o.route
	}
	return len(o.cols)
}

// keyColumns returns the columns whose values, in order, begin the keys of
// o's rows, or nil when its keys do not follow its values (system
// relations, append-only tables without a primary key, which store rows
// in arrival order).
func keyColumns(o *object) []int {
	switch {
	case o.system != nil:
		return nil
	case len(o.pk) > 0:
		return o.pk
	case o.storesInArrivalOrder():
		return nil
	case o.kind != sql.Table && o.kind != sql.MaterializedView:
		return nil
	}
	if len(o.cols) <= len(wholeRowColumns) {
		return wholeRowColumns[:len(o.cols):len(o.cols)]
	}
	cols := make([]int, len(o.cols))
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// wholeRowColumns is 0, 1, 2, ...: keyColumns' answer, shared, for a
// relation keyed by its whole row (its callers only read it).
var wholeRowColumns = func() []int {
	cols := make([]int, 64)
	for i := range cols {
		cols[i] = i
	}
	return cols
}()

// findKeyConds returns the conjuncts of preds (all of which must hold)
// that bound key columns of o, or nil when none does.
func findKeyConds(o *object, preds ...plan.Expr) []keyCond {
	cols := keyColumns(o)
	if cols == nil {
		return nil
	}
	return findCondsOn(o, cols, preds...)
}

// findCondsOn is findKeyConds for an order of o's rows by cols (an
// index's).
func findCondsOn(o *object, cols []int, preds ...plan.Expr) []keyCond {
	pos := make(map[int]int, len(cols))
	for p, c := range cols {
		pos[c] = p
	}
	var conds []keyCond
	var visit func(e plan.Expr)
	visit = func(e plan.Expr) {
		switch x := e.(type) {
		case *plan.And:
			for _, a := range x.Args {
				visit(a)
			}
		case *plan.BinOp:
			op := x.Op.Name
			if !comparison(x.Op) {
				return
			}
			col, cst := x.Left, x.Right
			if _, ok := keyColumn(col); !ok {
				col, cst = cst, col
				op = flipComparison(op)
			}
			c, ok := keyColumn(col)
			p, isKey := pos[c]
			if !ok || !isKey || !rowConstant(cst) || !comparable(o.cols[c].Type.ID, cst.Type().ID) {
				return
			}
			conds = append(conds, keyCond{pos: p, op: op, args: []plan.Expr{cst},
				text: o.cols[c].Name + " " + op + " " + cst.String()})
		case *plan.InList:
			c, ok := keyColumn(x.Arg)
			p, isKey := pos[c]
			if x.Negated || !ok || !isKey || !comparison(x.Eq) {
				return
			}
			var items []string
			for _, item := range x.List {
				if !rowConstant(item) || !comparable(o.cols[c].Type.ID, item.Type().ID) {
					return
				}
				items = append(items, item.String())
			}
			conds = append(conds, keyCond{pos: p, op: "=", args: x.List,
				text: o.cols[c].Name + " IN (" + strings.Join(items, ", ") + ")"})
		}
	}
	for _, e := range preds {
		visit(e)
	}
	return conds
}

// comparison reports whether op is one of the ordering comparisons of
// types whose key order is their SQL order.
func comparison(op *types.Operator) bool {
	if op == nil || op.Result.ID != types.Bool || !ordered(op.Left.ID) || !ordered(op.Right.ID) {
		return false
	}
	switch op.Name {
	case "=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// ordered reports whether values of type id compare under the SQL
// operators as their keys compare bytewise (docs/format/keys.md).
func ordered(id types.TypeID) bool {
	switch id {
	case types.Bool, types.Int2, types.Int4, types.Int8, types.Numeric,
		types.Float4, types.Float8, types.Text, types.Varchar, types.Bytea,
		types.Date, types.Timestamp, types.TimestampTZ, types.Interval, types.Time, types.TimeTZ:
		return true
	}
	return false
}

func flipComparison(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// keyColumn returns the column e reads when e is a column or a cast of
// one that keeps every value and its order exactly (a wider integer, an
// integer as numeric, a small integer as a float, varchar as text).
func keyColumn(e plan.Expr) (int, bool) {
	switch x := e.(type) {
	case *plan.ColRef:
		return x.Index, true
	case *plan.Cast:
		from, to := x.Arg.Type(), x.Typ
		exact := false
		switch {
		case isInt(from.ID) && isInt(to.ID):
			exact = intWidth(to.ID) >= intWidth(from.ID)
		case isInt(from.ID) && to.ID == types.Numeric:
			exact = to.Precision < 0
		case from.ID == types.Int2 || from.ID == types.Int4:
			exact = to.ID == types.Float8 || to.ID == types.Float4 && from.ID == types.Int2
		case from.ID == types.Text || from.ID == types.Varchar:
			exact = (to.ID == types.Text || to.ID == types.Varchar) && to.Length < 0
		}
		if exact {
			return keyColumn(x.Arg)
		}
	}
	return 0, false
}

// rowConstant reports whether e's value is the same for every row: a
// constant, a parameter, or casts of one.
func rowConstant(e plan.Expr) bool {
	switch x := e.(type) {
	case *plan.Const, *plan.Param:
		return true
	case *plan.Cast:
		return rowConstant(x.Arg)
	}
	return false
}

// comparable reports whether a constant of type c can be turned into a
// bound on the values of a column of type col.
func comparable(col, c types.TypeID) bool {
	switch {
	case isInt(col):
		return isInt(c) || c == types.Numeric ||
			(c == types.Float8 || c == types.Float4) && col != types.Int8
	case col == types.Numeric:
		return isInt(c) || c == types.Numeric
	}
	return valueKind(col) == valueKind(c) && ordered(col)
}

func isInt(id types.TypeID) bool { return id == types.Int2 || id == types.Int4 || id == types.Int8 }

func intWidth(id types.TypeID) int {
	switch id {
	case types.Int2:
		return 2
	case types.Int4:
		return 4
	}
	return 8
}

// valueKind is the kind of the values of type id (varchar values are
// text).
func valueKind(id types.TypeID) types.Kind {
	if id == types.Varchar {
		return types.Text
	}
	return id
}

// boundKind is what "column op constant" says of a column's values.
type boundKind uint8

const (
	boundNone boundKind = iota // no value satisfies it
	boundAll                   // every non-NULL value does
	boundEq
	boundGE
	boundGT
	boundLE
	boundLT
)

// columnBound translates "column op v", compared by value, into a bound on
// the values of a column of type col, as a value of the column's kind.
func columnBound(col types.TypeID, op string, v types.Value) (boundKind, types.Value) {
	if v.IsNull() {
		return boundNone, types.Null
	}
	var kind boundKind
	switch op {
	case "=":
		kind = boundEq
	case ">=":
		kind = boundGE
	case ">":
		kind = boundGT
	case "<=":
		kind = boundLE
	case "<":
		kind = boundLT
	}
	switch {
	case isInt(col):
		return intBound(col, kind, v)
	case col == types.Numeric && isInt(v.Kind()):
		return kind, types.MakeNumeric(types.NumericFromInt(v.Int()))
	}
	return kind, v
}

// intBound is columnBound for an integer column: the constant's floor and
// ceiling turn every comparison into an inclusive bound, clamped to the
// column's range.
func intBound(col types.TypeID, kind boundKind, v types.Value) (boundKind, types.Value) {
	lo, hi := intRange(col)
	// The constant as one of: below every int64, floor and ceiling, above
	// every int64 (NaN sorts above every number, as infinity does).
	var floor, ceil int64
	below, above := false, false
	switch v.Kind() {
	case types.Int2, types.Int4, types.Int8:
		floor, ceil = v.Int(), v.Int()
	case types.Float4, types.Float8:
		f := v.Float()
		switch {
		case math.IsNaN(f) || f >= 1<<63:
			above = true
		case f < -(1 << 63):
			below = true
		default:
			floor, ceil = int64(math.Floor(f)), int64(math.Ceil(f))
		}
	case types.Numeric:
		d := v.Decimal()
		switch {
		case d.Form != apd.Finite:
			above = d.Form != apd.Infinite || !d.Negative
			below = !above
		case d.Cmp(apd.New(math.MaxInt64, 0)) > 0:
			above = true
		case d.Cmp(apd.New(math.MinInt64, 0)) < 0:
			below = true
		default:
			var f, c apd.Decimal
			ctx := apd.BaseContext.WithPrecision(40)
			if _, err := ctx.Floor(&f, d); err != nil {
				return boundAll, types.Null // cannot happen; the filter decides
			}
			if _, err := ctx.Ceil(&c, d); err != nil {
				return boundAll, types.Null
			}
			floor, _ = f.Int64()
			ceil, _ = c.Int64()
		}
	default:
		return boundAll, types.Null // not a number: the filter decides
	}
	if below || above {
		switch {
		case kind == boundEq:
			return boundNone, types.Null
		case (kind == boundGE || kind == boundGT) == below:
			return boundAll, types.Null
		}
		return boundNone, types.Null
	}
	// An inclusive bound: low (>= n) or high (<= n).
	var n int64
	low := false
	switch kind {
	case boundEq:
		if floor != ceil || floor < lo || floor > hi {
			return boundNone, types.Null
		}
		return boundEq, types.MakeInt(col, floor)
	case boundGE:
		n, low = ceil, true
	case boundGT:
		if floor == math.MaxInt64 {
			return boundNone, types.Null
		}
		n, low = floor+1, true
	case boundLE:
		n = floor
	case boundLT:
		if ceil == math.MinInt64 {
			return boundNone, types.Null
		}
		n = ceil - 1
	}
	switch {
	case low && n > hi, !low && n < lo:
		return boundNone, types.Null
	case low && n <= lo, !low && n >= hi:
		return boundAll, types.Null
	case low:
		return boundGE, types.MakeInt(col, n)
	}
	return boundLE, types.MakeInt(col, n)
}

func intRange(id types.TypeID) (int64, int64) {
	switch id {
	case types.Int2:
		return math.MinInt16, math.MaxInt16
	case types.Int4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// keySpan is what the conditions on one key position allow: a set of
// values (hasEq), or bounds (nil: unbounded), never NULL. Values are held
// as their key encodings, which order as the values do.
type keySpan struct {
	used, empty    bool
	hasEq          bool
	eqs            [][]byte // sorted, distinct
	lo, hi         []byte
	loIncl, hiIncl bool
}

func (s *keySpan) add(kind boundKind, v types.Value) {
	s.used = true
	var enc []byte
	if kind != boundNone && kind != boundAll {
		enc = zset.EncodeKey(nil, v)
	}
	switch kind {
	case boundNone:
		s.empty = true
	case boundEq:
		s.intersect([][]byte{enc})
	case boundGE, boundGT:
		incl := kind == boundGE
		if c := bytes.Compare(enc, s.lo); s.lo == nil || c > 0 || c == 0 && !incl {
			s.lo, s.loIncl = enc, incl
		}
	case boundLE, boundLT:
		incl := kind == boundLE
		if c := bytes.Compare(enc, s.hi); s.hi == nil || c < 0 || c == 0 && !incl {
			s.hi, s.hiIncl = enc, incl
		}
	}
}

func (s *keySpan) intersect(set [][]byte) {
	slices.SortFunc(set, bytes.Compare)
	set = slices.CompactFunc(set, bytes.Equal)
	if !s.hasEq {
		s.hasEq, s.eqs = true, set
		return
	}
	s.eqs = slices.DeleteFunc(s.eqs, func(e []byte) bool {
		_, found := slices.BinarySearchFunc(set, e, bytes.Compare)
		return !found
	})
}

// within reports whether the value encoded as e is within s's bounds.
func (s *keySpan) within(e []byte) bool {
	if s.lo != nil {
		if c := bytes.Compare(e, s.lo); c < 0 || c == 0 && !s.loIncl {
			return false
		}
	}
	if s.hi != nil {
		if c := bytes.Compare(e, s.hi); c > 0 || c == 0 && !s.hiIncl {
			return false
		}
	}
	return true
}

// keyRanges returns the sorted, disjoint key ranges of o that hold every
// row satisfying conds, and false when conds do not bound o's leading key
// column (the whole relation must be read). The conds' parameters must be
// bound.
func keyRanges(o *object, conds []keyCond) ([]keyRange, bool) {
	cols := keyColumns(o)
	if cols == nil {
		return nil, false
	}
	return keyRangesOn(o, keyOrder{cols: cols, route: o.routeColumns(), prefix: o.rowsPrefix()}, conds)
}

// keyOrder is an order of a relation's rows by key: the columns whose
// values, in order, begin the keys, how many of them are the routing key
// that chooses the bucket, and the prefix the keys are stored under.
type keyOrder struct {
	cols   []int
	route  int
	prefix []byte
}

// keyRangesOn is keyRanges for the order ord of o's rows (the stored
// order, or an index's).
func keyRangesOn(o *object, ord keyOrder, conds []keyCond) ([]keyRange, bool) {
	if len(conds) == 0 || ord.cols == nil || fullScansOnly.Load() {
		return nil, false
	}
	if rs, ok := leadingEqualityRanges(o, ord, conds); ok {
		return rs, true
	}
	return spanRanges(o, ord, conds)
}

// maxLeadingEqualities is the most conditions leadingEqualityRanges
// takes.
const maxLeadingEqualities = 8

// leadingEqualityRanges is keyRangesOn for the conditions of a read by
// key: one equality with one value on each of the leading key positions
// (id = $1; a = 1 AND b = 2). It returns what spanRanges returns for
// them, one range or none, built in two allocations instead of spans and
// sets of prefixes. ok is false for any other conditions, and when a
// value fails to evaluate (spanRanges leaves that condition to the
// filter).
func leadingEqualityRanges(o *object, ord keyOrder, conds []keyCond) (rs []keyRange, ok bool) {
	n := len(conds)
	if n > min(maxLeadingEqualities, len(ord.cols)) || ord.route < 1 {
		return nil, false
	}
	var vals [maxLeadingEqualities]types.Value
	var seen uint
	none := false
	for _, c := range conds {
		if c.op != "=" || len(c.args) != 1 || c.pos >= n || seen&(1<<c.pos) != 0 {
			return nil, false
		}
		seen |= 1 << c.pos
		v, err := c.args[0].Eval(nil)
		if err != nil {
			return nil, false
		}
		switch kind, cv := columnBound(o.cols[ord.cols[c.pos]].Type.ID, "=", v); kind {
		case boundEq:
			vals[c.pos] = cv
		case boundNone:
			none = true // no value of the column equals v, or v is NULL
		default:
			return nil, false
		}
	}
	if none {
		return nil, true
	}
	// The range is [lo, PrefixEnd(lo)) for lo = the prefix and the
	// values' key encodings; both share one buffer.
	k, bucket := append(make([]byte, 0, 2*(len(ord.prefix)+16*n)), ord.prefix...), allBuckets
	for i, v := range vals[:n] {
		k = zset.EncodeKey(k, v)
		if i+1 == ord.route {
			bucket = zset.Bucket(k[len(ord.prefix):])
		}
	}
	m := len(k)
	k = append(k, k...)
	return []keyRange{{lo: k[:m:m], hi: prefixEndInPlace(k[m:]), bucket: bucket}}, true
}

// prefixEndInPlace is state.PrefixEnd(k), made in k's own bytes.
func prefixEndInPlace(k []byte) []byte {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] < 0xff {
			k[i]++
			return k[:i+1]
		}
	}
	return nil
}

// spanRanges is keyRangesOn for any conditions: what they allow at each
// key position (keySpan), and the prefixes the positions that = or IN
// fix make.
func spanRanges(o *object, ord keyOrder, conds []keyCond) ([]keyRange, bool) {
	cols := ord.cols
	spans := make([]keySpan, len(cols))
	for _, c := range conds {
		typ := o.cols[cols[c.pos]].Type.ID
		sp := &spans[c.pos]
		if len(c.args) == 1 {
			v, err := c.args[0].Eval(nil)
			if err != nil {
				continue // the filter reports it, or decides otherwise
			}
			sp.add(columnBound(typ, c.op, v))
			continue
		}
		var set [][]byte
		ok := true
		for _, a := range c.args {
			v, err := a.Eval(nil)
			if err != nil {
				ok = false
				break
			}
			if kind, cv := columnBound(typ, "=", v); kind == boundEq {
				set = append(set, zset.EncodeKey(nil, cv))
			}
		}
		if ok {
			sp.used = true
			sp.intersect(set)
		}
	}
	for i := range spans {
		sp := &spans[i]
		if sp.hasEq {
			sp.eqs = slices.DeleteFunc(sp.eqs, func(e []byte) bool { return !sp.within(e) })
			sp.empty = sp.empty || len(sp.eqs) == 0
		}
		if sp.empty {
			return nil, true // the conjunction holds for no row
		}
	}
	if !spans[0].used {
		return nil, false
	}
	null := zset.EncodeKey(nil, types.Null)
	relPrefix := ord.prefix
	prefixes := [][]byte{relPrefix}
	// buckets[i] is the bucket of prefixes[i] once the prefixes fix the
	// routing columns.
	var buckets []int
	fixed, route := 0, ord.route // the leading columns every prefix fixes
	bucketOf := func(i int) int {
		if buckets == nil {
			return allBuckets
		}
		return buckets[i]
	}
	for _, sp := range spans {
		if !sp.used {
			break
		}
		if sp.hasEq && len(prefixes)*len(sp.eqs) <= maxKeyRanges {
			fixed++
			next := make([][]byte, 0, len(prefixes)*len(sp.eqs))
			var nextBuckets []int
			for i, p := range prefixes {
				for _, e := range sp.eqs {
					np := append(slices.Clip(p), e...)
					next = append(next, np)
					switch {
					case fixed == route:
						nextBuckets = append(nextBuckets, zset.Bucket(np[len(relPrefix):]))
					case fixed > route:
						nextBuckets = append(nextBuckets, buckets[i])
					}
				}
			}
			prefixes, buckets = next, nextBuckets
			continue
		}
		if sp.hasEq {
			sp = keySpan{lo: sp.eqs[0], loIncl: true, hi: sp.eqs[len(sp.eqs)-1], hiIncl: true}
		}
		var out []keyRange
		for i, p := range prefixes {
			lo, hi := p, append(slices.Clip(p), null...)
			if sp.lo != nil {
				lo = append(slices.Clip(p), sp.lo...)
				if !sp.loIncl {
					lo = state.PrefixEnd(lo)
				}
			}
			if sp.hi != nil {
				hi = append(slices.Clip(p), sp.hi...)
				if sp.hiIncl {
					hi = state.PrefixEnd(hi)
				}
			}
			if bytes.Compare(lo, hi) < 0 {
				out = append(out, keyRange{lo: lo, hi: hi, bucket: bucketOf(i)})
			}
		}
		return out, true
	}
	out := make([]keyRange, len(prefixes))
	for i, p := range prefixes {
		out[i] = keyRange{lo: p, hi: state.PrefixEnd(p), bucket: bucketOf(i)}
	}
	return out, true
}

// mergeRanges returns the union of rs as sorted, disjoint ranges.
func mergeRanges(rs []keyRange) []keyRange {
	slices.SortFunc(rs, func(a, b keyRange) int { return bytes.Compare(a.lo, b.lo) })
	var out []keyRange
	for _, r := range rs {
		if n := len(out); n > 0 && bytes.Compare(r.lo, out[n-1].hi) <= 0 {
			last := &out[n-1]
			if r.bucket != last.bucket {
				last.bucket = allBuckets
			}
			if bytes.Compare(r.hi, last.hi) > 0 {
				last.hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// rangeConds returns the conds that decide the key ranges, by key
// position: those on the leading positions that = or IN fix, and those on
// the position after them; none when the leading position has none.
func rangeConds(conds []keyCond) []keyCond {
	conds = slices.Clone(conds)
	slices.SortStableFunc(conds, func(a, b keyCond) int { return a.pos - b.pos })
	n, pos := 0, 0
	for n < len(conds) && conds[n].pos == pos {
		fixed := false // an equality fixes the position, bounds or not
		for ; n < len(conds) && conds[n].pos == pos; n++ {
			fixed = fixed || conds[n].op == "="
		}
		if !fixed {
			break
		}
		pos++
	}
	return conds[:n]
}

// readKeyRanges returns o's stored rows under ranges (sorted, disjoint) as
// r holds them, in key order: from the relation cache when r is the
// current state and the cache holds o, else from the store, split between
// par's workers when the read is large (readStored).
func readKeyRanges(ctx context.Context, r state.Reader, o *object, ranges []keyRange, par diff.Parallelism) (zset.Batch, error) {
	if o.unstored {
		return nil, unstoredReadError(o)
	}
	if cr, ok := r.(currentReader); ok {
		if rows, ok := cr.eng.cache.lookup(o.id); ok {
			return cachedRanges(o, rows, ranges), nil
		}
		r = cr.Reader
	}
	var orderKey func(dst []byte, row zset.Row) []byte
	if slices.ContainsFunc(ranges, func(kr keyRange) bool { return kr.bucket == allBuckets }) {
		// Only a read of every bucket merges by order key (readStored).
		orderKey = o.rowOrderKey()
	}
	return readStored(ctx, r, o.rowsPrefix(), ranges, orderKey, par)
}

// cachedRanges returns the rows of rows, o's whole contents in key order,
// whose keys lie in ranges, found by binary search.
func cachedRanges(o *object, rows zset.Batch, ranges []keyRange) zset.Batch {
	keyOf, prefix := o.orderKeyOf(), o.rowsPrefix()
	var buf []byte
	first := func(bound []byte) int {
		return sort.Search(len(rows), func(i int) bool {
			buf = keyOf(buf, prefix, rows[i].Row)
			return bytes.Compare(buf, bound) >= 0
		})
	}
	var out zset.Batch
	for _, kr := range ranges {
		out = append(out, rows[first(kr.lo):first(kr.hi)]...)
	}
	return out
}

// inKeyRanges reports whether key lies in one of ranges (sorted, disjoint).
func inKeyRanges(key []byte, ranges []keyRange) bool {
	i := sort.Search(len(ranges), func(i int) bool { return bytes.Compare(ranges[i].hi, key) > 0 })
	return i < len(ranges) && bytes.Compare(ranges[i].lo, key) <= 0
}

// relationRangesAt is relationAt for the rows of o under ranges.
func relationRangesAt(ctx context.Context, r state.Reader, o *object, asOf uint64, ranges []keyRange, par diff.Parallelism) (zset.Batch, error) {
	if asOf == asOfNow {
		return readKeyRanges(ctx, r, o, ranges, par)
	}
	if o.kind != sql.MaterializedView {
		return relationAt(ctx, r, o, asOf) // reports the error
	}
	if err := o.existedAt(asOf); err != nil {
		return nil, err
	}
	cur, err := readKeyRanges(ctx, r, o, ranges, par)
	if err != nil {
		return nil, err
	}
	later, err := readChanges(r, o.id, asOf, ^uint64(0)-1)
	if err != nil {
		return nil, err
	}
	keyOf, prefix := o.orderKeyOf(), o.rowsPrefix()
	var buf []byte
	for _, c := range later {
		if buf = keyOf(buf, prefix, c.Row); inKeyRanges(buf, ranges) {
			cur = append(cur, zset.Entry{Row: c.Row, Weight: -c.Weight})
		}
	}
	return zset.Consolidate(cur)
}

// walkScans calls fn for each scan in p, in order, with the predicates of
// the filters directly above it (all of which its rows must pass; none:
// every row of the scan is used).
func walkScans(p plan.Node, fn func(scan *plan.Scan, preds []plan.Expr)) {
	var visit func(n plan.Node, preds []plan.Expr)
	visit = func(n plan.Node, preds []plan.Expr) {
		switch x := n.(type) {
		case *plan.Filter:
			visit(x.Input, append(slices.Clip(preds), x.Pred))
			return
		case *plan.Scan:
			fn(x, preds)
			return
		}
		for _, in := range n.Inputs() {
			visit(in, nil)
		}
	}
	visit(p, nil)
}

// scanUses maps each relation p scans to the predicates that filter its
// scans, one list per scan (an empty list: a scan that reads every row).
func scanUses(p plan.Node) map[string][][]plan.Expr {
	uses := map[string][][]plan.Expr{}
	walkScans(p, func(scan *plan.Scan, preds []plan.Expr) {
		uses[scan.Relation] = append(uses[scan.Relation], preds)
	})
	return uses
}

// scanRanges returns the key ranges of o that hold every row that any of
// its scans, filtered by preds, keeps; false when some scan needs all of
// o's rows.
func scanRanges(o *object, scans [][]plan.Expr) ([]keyRange, bool) {
	return condRanges(o, scansConds(o, scans))
}

// scansConds returns, for each of o's scans filtered by preds, the
// conjuncts that bound o's key columns (findKeyConds).
func scansConds(o *object, scans [][]plan.Expr) [][]keyCond {
	if len(scans) == 0 {
		return nil
	}
	conds := make([][]keyCond, len(scans))
	for i, preds := range scans {
		conds[i] = findKeyConds(o, preds...)
	}
	return conds
}

// condRanges is scanRanges for the scans' key conditions (scansConds),
// whose parameters must be bound.
func condRanges(o *object, scans [][]keyCond) ([]keyRange, bool) {
	if len(scans) == 0 {
		return nil, false
	}
	if len(scans) == 1 {
		return keyRanges(o, scans[0])
	}
	var all []keyRange
	for _, conds := range scans {
		rs, ok := keyRanges(o, conds)
		if !ok {
			return nil, false
		}
		all = append(all, rs...)
	}
	return mergeRanges(all), true
}
