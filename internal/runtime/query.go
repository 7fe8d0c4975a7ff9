package runtime

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// statementParams is what a statement run by ExecPrepared knows of its
// parameters $1..$n before it binds: their types, declared or inferred
// when it was prepared (an Unknown entry, or a parameter past the list,
// is inferred from its use), and, when it runs, their values, each
// already of its parameter's type (NULL: types.Null). Describing a
// statement gives types and no values.
type statementParams struct {
	types  []types.Type
	values []types.Value
	// insert, when not nil, keeps the prepared INSERT's binding between
	// its executions (insertplan.go).
	insert *insertCache
	// sel, when not nil, keeps the prepared SELECT's plan between its
	// executions (selectplan.go).
	sel *selectCache
	// clock is when the statement runs, for now() (clock.go); zero
	// where the statement's time does not apply.
	clock sql.Clock
	// zone is the session time zone the statement is bound in (zone.go).
	zone types.Zone
	// random is the session's generator for random() and setseed().
	random *types.Random
}

// declaredTypes is statementParams for parameter types alone.
func declaredTypes(pt []types.Type) *statementParams { return &statementParams{types: pt} }

// withSlots returns p (nil: nothing) with at least n parameter types, the
// ones past p's Unknown.
func (p *statementParams) withSlots(n int) *statementParams {
	if p != nil && n <= len(p.types) {
		return p
	}
	d := statementParams{}
	if p != nil {
		d = *p
	}
	if n > len(d.types) {
		d.types = append(append([]types.Type(nil), d.types...), make([]types.Type, n-len(d.types))...)
	}
	return &d
}

// newBinder returns a binder over cat whose parameters are parsed from
// paramText once their types are known (call bindParams after binding).
// declared (nil: nothing) holds what a prepared statement gives of its
// parameters. Its values are the binder's at once, and so are those of
// paramText for declared types, so that LIMIT $1 and OFFSET $1, which
// read their value while binding, see them (a text that fails to parse is
// reported by bindParams).
func newBinder(cat *catalog, paramText []*string, declared *statementParams) *sql.Binder {
	if declared == nil {
		declared = &statementParams{}
	}
	n := max(len(paramText), len(declared.types))
	vals := make([]types.Value, n)
	pt := make([]types.Type, n)
	copy(pt, declared.types)
	copy(vals, declared.values)
	zone := declared.zone
	if !declared.clock.Transaction.IsZero() {
		// The current date of time with time zone conversions (sql.Clock).
		zone = zone.OnDate(declared.clock.Transaction)
	}
	for i, p := range paramText {
		if p != nil && pt[i].ID != types.Unknown {
			if v, err := parseParam(cat, pt[i], *p, zone); err == nil {
				vals[i] = v
			}
		}
	}
	return &sql.Binder{Cat: cat, Params: &vals, ParamTypes: pt, Clock: declared.clock, Zone: zone, Random: declared.random}
}

// bindParams parses the parameter texts as the types the binder inferred
// (text where nothing was inferred).
func bindParams(b *sql.Binder, paramText []*string) error {
	for i, p := range paramText {
		if p == nil {
			(*b.Params)[i] = types.Null
			continue
		}
		t := b.ParamTypes[i]
		if t.ID == types.Unknown {
			t = types.Of(types.Text)
		}
		cat, _ := b.Cat.(*catalog)
		v, err := parseParam(cat, t, *p, b.Zone)
		if err != nil {
			return err
		}
		(*b.Params)[i] = v
	}
	return nil
}

// parseParam parses a parameter's text as type t, as t's input function
// does: an OID alias type ($1::regclass) looks the name up in a session's
// catalog.
func parseParam(cat *catalog, t types.Type, text string, z types.Zone) (types.Value, error) {
	if cat != nil && cat.InSession() && (types.IsReg(t.ID) || t.ID.IsArray() && types.IsReg(t.ID.Elem())) {
		if !t.ID.IsArray() {
			return types.CastReg(types.MakeText(text), t, true, cat)
		}
		arr, err := types.Parse(types.ArrayType(types.Of(types.Text)), text)
		if err != nil {
			return types.Null, err
		}
		out := make([]types.Value, len(arr.Elems()))
		for i, e := range arr.Elems() {
			if out[i], err = types.CastReg(e, t.Elem(), true, cat); err != nil {
				return types.Null, err
			}
		}
		return arr.WithElems(t.ID.Elem(), out), nil
	}
	return types.ParseZone(t, text, z)
}

func (s *Session) execSelect(ctx context.Context, n *pg.Node, paramText []*string) (*Result, error) {
	if sel := n.GetSelectStmt(); sel.IntoClause != nil {
		return s.execSelectInto(ctx, sel)
	}
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	kept, params := s.declared.keptSelect(n), s.params()
	var key selectKey
	if kept != nil {
		key = s.selectKeyOf(cat, params.zone)
	}
	cat = s.sessionCatalog(ctx, cat, r)
	b, p, ok := kept.kept(key, params.values)
	if !ok {
		b = newBinder(cat, paramText, params)
		if p, err = b.Query(n); err != nil {
			return nil, err
		}
		if kept != nil {
			kept.keep(key, b, p, cat)
		}
	}
	if kept != nil && kept.p != nil {
		ctx = withKeptCircuits(ctx, kept.circuits)
	}
	limitRecursion(p, s.recursionLimit())
	if err := bindParams(b, paramText); err != nil {
		return nil, err
	}
	if err := cat.shardReadable(p); err != nil {
		return nil, err
	}
	if streamingWanted(ctx) {
		if rs, ok, err := s.streamQuery(ctx, r, cat, p); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return &Result{Columns: outColumns(p.Columns()), Stream: rs, Tag: "SELECT"}, nil
		}
		if rs, ok, err := s.streamOrdered(ctx, r, cat, p); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return &Result{Columns: outColumns(p.Columns()), Stream: rs, Tag: "SELECT"}, nil
		}
	}
	rows, err := runQuery(ctx, r, cat, p)
	if err != nil {
		return nil, err
	}
	return &Result{Columns: outColumns(p.Columns()), Rows: rows, Tag: fmt.Sprintf("SELECT %d", len(rows))}, nil
}

// runQuery answers a query plan over the relations in r: the plan's
// circuit runs once with the relations' contents as its input delta (only
// the key ranges that a scan's filter can keep, keyrange.go), or, for an
// aggregate over one relation, once per work_mem chunk of its rows
// (chunkedquery.go);
// Sort, Limit and the Project between them at the top are applied to the
// result in order.
func runQuery(ctx context.Context, r state.Reader, cat *catalog, p plan.Node) ([]zset.Row, error) {
	return runQueryAt(ctx, r, cat, p, asOfNow)
}

// runQueryAt is runQuery reading materialized views as of epoch asOf
// (asOfNow: their current contents). Tables have no history, so a query at an
// epoch may read views only.
func runQueryAt(ctx context.Context, r state.Reader, cat *catalog, p plan.Node, asOf uint64) ([]zset.Row, error) {
	if hasOrder(p) {
		// An ORDER BY of one relation sorts past work_mem on disk
		// (spillsort.go).
		if it, ok, err := orderedRows(ctx, r, cat, p, asOf); ok {
			if err != nil {
				return nil, err
			}
			return collectRows(ctx, it)
		}
	}
	if rows, ok, err := runTop(ctx, p, func(in plan.Node) ([]zset.Row, error) {
		return runQueryAt(ctx, r, cat, in, asOf)
	}); ok {
		return rows, err
	}
	c, err := queryCircuit(ctx, p)
	if err != nil {
		return nil, err
	}
	if rels := c.Relations(); len(rels) == 1 && asOf == asOfNow && chunkable(stripForQuery(p)) {
		if o := cat.lookup(rels[0]); o != nil {
			out, ok, err := runChunked(ctx, r, p, c, o, cat.parallelism())
			if ok {
				if err != nil {
					return nil, err
				}
				return resultRows(ctx, out)
			}
		}
	}
	if asOf == asOfNow {
		// Joins of stored relations, fed a chunk at a time
		// (spilljoin.go).
		if out, ok, err := runChunkedRelations(ctx, r, cat, p, c); ok {
			if err != nil {
				return nil, err
			}
			return resultRows(ctx, out)
		}
	}
	deltas := map[string]zset.Batch{}
	uses := scanUses(p)
	var lookups map[string]lookupJoin
	if asOf == asOfNow && !fullScansOnly.Load() {
		lookups = findLookupJoins(cat, p, uses)
	}
	for _, name := range c.Relations() {
		o, pos := cat.input(name)
		if o == nil {
			return nil, errs.Newf(errs.Internal, "internal error: query reads unknown relation %q", name)
		}
		if _, ok := lookups[name]; ok {
			continue // read below, once the outer relation is
		}
		par := cat.parallelism()
		switch acc := chooseAccess(cat, o, uses[name], asOf == asOfNow); {
		case pos != nil:
			// A view's shaped scan (inputs.go): the whole table, cut
			// to the columns the view reads.
			var rows zset.Batch
			if rows, err = relationAt(ctx, r, o, asOf); err == nil {
				deltas[name] = projectRows(rows, pos)
			}
		case acc.ix != nil:
			deltas[name], err = readIndexRanges(ctx, r, o, acc.ix, acc.ranges, par)
		case acc.ok:
			deltas[name], err = relationRangesAt(ctx, r, o, asOf, acc.ranges, par)
		case asOf == asOfNow && o.system == nil:
			deltas[name], err = readContentsOn(ctx, r, o, par)
		default:
			deltas[name], err = relationAt(ctx, r, o, asOf)
		}
		if err != nil {
			return nil, err
		}
		if err := memgov.From(ctx).Grow(batchBytes(deltas[name])); err != nil {
			return nil, err
		}
	}
	if err := readLookups(ctx, r, cat, lookups, deltas, uses); err != nil {
		return nil, err
	}
	return stepQuery(ctx, c, cat, deltas)
}

// runTop applies p's top when it is a Limit, a Sort, or a Project over
// either, to the rows run returns for its input, and reports whether it
// did (false: p is the circuit's to answer).
func runTop(ctx context.Context, p plan.Node, run func(plan.Node) ([]zset.Row, error)) ([]zset.Row, bool, error) {
	var rows []zset.Row
	var err error
	switch n := p.(type) {
	case *plan.Limit:
		if sort, ok := n.Input.(*plan.Sort); ok && n.Count >= 0 && n.Offset <= math.MaxInt32 && n.Count <= math.MaxInt32 {
			// Only the first Offset+Count rows of the order are kept.
			if rows, err = run(sort.Input); err != nil {
				return nil, true, err
			}
			if rows, err = firstRows(ctx, rows, sort.Keys, n.Offset+n.Count); err != nil {
				return nil, true, err
			}
		} else if rows, err = run(n.Input); err != nil {
			return nil, true, err
		}
		rows = rows[min(n.Offset, int64(len(rows))):]
		if n.Count >= 0 && n.Count < int64(len(rows)) {
			rows = rows[:n.Count]
		}
		return rows, true, nil
	case *plan.Sort:
		if rows, err = run(n.Input); err != nil {
			return nil, true, err
		}
		rows, err = sortRows(ctx, rows, n.Keys)
		return rows, true, err
	case *plan.Project:
		if !hasOrder(n.Input) {
			return nil, false, nil
		}
		if rows, err = run(n.Input); err != nil {
			return nil, true, err
		}
		rows, err = projectResult(ctx, rows, n.Exprs)
		return rows, true, err
	}
	return nil, false, nil
}

// stepQuery steps a query's circuit c once over its relations' rows,
// deltas, and returns the result's rows.
func stepQuery(ctx context.Context, c *diff.Circuit, cat *catalog, deltas map[string]zset.Batch) ([]zset.Row, error) {
	st := queryState(ctx)
	out, err := c.StepParallel(ctx, st, deltas, cat.parallelism())
	closeState(st)
	if err != nil {
		return nil, err
	}
	return resultRows(ctx, out)
}

// projectResult evaluates exprs over each of rows, a Project's
// output.
func projectResult(ctx context.Context, rows []zset.Row, exprs []plan.Expr) ([]zset.Row, error) {
	out := make([]zset.Row, len(rows))
	for i, row := range rows {
		if err := ops.Interrupted(ctx, i); err != nil {
			return nil, err
		}
		o := make(zset.Row, len(exprs))
		for j, e := range exprs {
			v, err := e.Eval(row)
			if err != nil {
				return nil, err
			}
			o[j] = v
		}
		out[i] = o
	}
	return out, nil
}

// resultRows returns the rows of a query's result batch, each row as
// many times as its weight.
func resultRows(ctx context.Context, out zset.Batch) ([]zset.Row, error) {
	var rows []zset.Row
	acct := memgov.From(ctx)
	for _, e := range out {
		acct.Charge(e.Weight * int64(unsafe.Sizeof(zset.Row{})))
		if e.Weight < 0 {
			return nil, errs.New(errs.Internal, "internal error: query result has a negative weight")
		}
		for i := int64(0); i < e.Weight; i++ {
			rows = append(rows, e.Row)
			if err := ops.Interrupted(ctx, len(rows)); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// hasOrder reports whether p's top (through Projects) is a Sort or Limit.
func hasOrder(p plan.Node) bool {
	for {
		switch n := p.(type) {
		case *plan.Sort, *plan.Limit:
			return true
		case *plan.Project:
			p = n.Input
		default:
			return false
		}
	}
}

// sortRows sorts rows by keys, stably; it stops with ctx's error when ctx
// ends.
func sortRows(ctx context.Context, rows []zset.Row, keys []plan.SortKey) ([]zset.Row, error) {
	return firstRows(ctx, rows, keys, -1)
}

// firstRows returns the first n rows (n < 0: all) of rows sorted by keys,
// stably: the prefix of sortRows' result, found without sorting the
// rest when n is less than there are rows (a top-N heap).
func firstRows(ctx context.Context, rows []zset.Row, keys []plan.SortKey, n int64) ([]zset.Row, error) {
	// The keys, the permutation and the sorted copy.
	if err := memgov.From(ctx).Grow(int64(len(rows)) * (int64(len(keys))*valueBytes + 48)); err != nil {
		return nil, err
	}
	vals := make([][]types.Value, len(rows))
	for i, row := range rows {
		if err := ops.Interrupted(ctx, i); err != nil {
			return nil, err
		}
		vals[i] = make([]types.Value, len(keys))
		for j, k := range keys {
			v, err := k.Expr.Eval(row)
			if err != nil {
				return nil, err
			}
			vals[i][j] = v
		}
	}
	cmp := func(a, b int) int {
		va, vb := vals[a], vals[b]
		for j, k := range keys {
			if c := compareSort(va[j], vb[j], k); c != 0 {
				return c
			}
		}
		return 0
	}
	var idx []int
	if n >= 0 && n < int64(len(rows)) {
		var err error
		if idx, err = topIndexes(ctx, len(rows), int(n), cmp); err != nil {
			return nil, err
		}
	} else {
		idx = make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
	}
	if err := sortStable(ctx, idx, cmp); err != nil {
		return nil, err
	}
	out := make([]zset.Row, len(idx))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out, nil
}

// topIndexes returns, in ascending order, the indexes in [0, count) of
// the n elements that a stable sort by cmp puts first: a heap of the n
// best so far, its top the worst of them (ties go to the later index).
func topIndexes(ctx context.Context, count, n int, cmp func(a, b int) int) ([]int, error) {
	worse := func(a, b int) bool {
		if c := cmp(a, b); c != 0 {
			return c > 0
		}
		return a > b
	}
	h := make([]int, 0, n)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && worse(h[l], h[m]) {
				m = l
			}
			if r := l + 1; r < len(h) && worse(h[r], h[m]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := range count {
		if err := ops.Interrupted(ctx, i); err != nil {
			return nil, err
		}
		switch {
		case len(h) < n:
			h = append(h, i)
			for j := len(h) - 1; j > 0 && worse(h[j], h[(j-1)/2]); j = (j - 1) / 2 {
				h[j], h[(j-1)/2] = h[(j-1)/2], h[j]
			}
		case n > 0 && worse(h[0], i):
			h[0] = i
			down(0)
		}
	}
	slices.Sort(h)
	return h, nil
}

// sortStable sorts idx stably by cmp: a bottom-up merge sort, which looks
// at ctx between its merges, every few thousand elements moved, and stops
// with ctx's error when ctx has ended. (The library's sorts cannot be
// interrupted, and a sort of millions of rows takes seconds.)
func sortStable(ctx context.Context, idx []int, cmp func(a, b int) int) error {
	const run = 32 // sorted by insertion first
	n := len(idx)
	for lo := 0; lo < n; lo += run {
		if err := ops.Interrupted(ctx, lo); err != nil {
			return err
		}
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && cmp(idx[j], idx[j-1]) < 0; j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
	}
	if n <= run {
		return nil
	}
	src, dst := idx, make([]int, n)
	moved := 0
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j := lo, mid
			for k := lo; k < hi; k++ {
				// The right run's element goes first only when it sorts
				// strictly before: equal elements keep their order.
				if j < hi && (i >= mid || cmp(src[j], src[i]) < 0) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
			}
			if moved += hi - lo; moved >= 1<<12 {
				moved = 0
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		src, dst = dst, src
	}
	copy(idx, src)
	return nil
}

func compareSort(a, b types.Value, k plan.SortKey) int {
	if a.IsNull() || b.IsNull() {
		if a.IsNull() == b.IsNull() {
			return 0
		}
		if a.IsNull() == k.NullsFirst {
			return -1
		}
		return 1
	}
	c := types.Compare(a, b)
	if k.Desc {
		c = -c
	}
	return c
}

// propagate applies table deltas to the stored tables' views: each
// materialized view, in dependency order, steps its circuit over the deltas
// of the relations it reads, stores its output delta, and passes it on to
// the views that read it.
func propagate(ctx context.Context, st state.Store, w *epochWrite, deltas map[string]zset.Batch) error {
	return propagateRouted(ctx, st, w, deltas, nil, w.cat.parallelism())
}

// propagateRouted is propagate with some of the table deltas split
// between the workers by bucket too (splitwrite.go), stepping on par's
// workers (a chunk of a large change splits however small it is,
// chunkParallelism). Views that read none
// of each other's outputs step concurrently on the workers
// (viewgroups.go).
func propagateRouted(ctx context.Context, st state.Store, w *epochWrite, deltas map[string]zset.Batch, routed map[string]diff.Routed, par diff.Parallelism) error {
	return propagateViews(ctx, st, w, deltas, routed, par)
}
