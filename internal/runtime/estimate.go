package runtime

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/cespare/xxhash/v2"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// EXPLAIN INCREMENTAL ESTIMATE shows, for each operator of the circuit
// that maintains (or would maintain) a view, the state it keeps and the
// rows it outputs while the view is first computed:
//
//   - estimated, for a view or query, from the rows of the relations it
//     reads: the circuit runs on two hash samples of them (every relation
//     sampled at the same fraction f, then f/2, the second a subset of the
//     first), and each count c(f) is extrapolated to the whole data as
//     c(f)·(1/f)^α with α = log2(c(f)/c(f/2)) clamped to [0, 2] — α is 0
//     for state that no longer grows (few groups), 1 for state that grows
//     with the data, 2 for a join of two growing inputs. With every input
//     small enough (f = 1) the estimate is the exact count;
//   - measured, for a materialized view, from the store: the keys and bytes
//     under each operator's state prefix.
//
// The sample runs in memory; nothing is written to the store.

// estimateSampleRows bounds the rows of the largest relation a sample
// feeds to the circuit.
const estimateSampleRows = 20000

// opCounts are one operator's state (keys, bytes of keys and values) and
// output rows.
type opCounts struct {
	keys, bytes, rows float64
}

// circuitEstimate is an estimate of every operator of a circuit.
type circuitEstimate struct {
	ops      []opCounts
	rows     map[string]float64 // each relation's rows, exactly
	fraction float64
	inputs   []string // "t: 1000000 rows"
}

func (s *Session) explainEstimate(ctx context.Context, st ext.Statement) (*Result, error) {
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var (
		query    *pg.Node
		offset   int
		measured *diff.Circuit
		prefix   []byte
	)
	if st.Name != "" {
		o := s.resolveIn(cat, st.Name)
		switch {
		case o == nil:
			return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", st.Name)
		case o.kind == sql.Table:
			return nil, errs.Newf(errs.WrongObjectType, "%q is a table: EXPLAIN INCREMENTAL takes a view or a query", st.Name)
		case o.system != nil:
			return nil, errs.Newf(errs.WrongObjectType, "%q is a system relation: it has no circuit", st.Name)
		case o.kind == sql.MaterializedView:
			measured, prefix = o.circuit, relPrefix(nsOpState, o.id)
		}
		query = o.query
	} else {
		tree, err := pgparse.Parse(st.Query)
		if err != nil {
			return nil, errs.WithPosition(parseError(err), 0)
		}
		if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
			return nil, errs.New(errs.SyntaxError, "EXPLAIN INCREMENTAL ESTIMATE takes a view name or one SELECT")
		}
		query, offset = tree.Stmts[0].Stmt, st.QueryOffset
	}
	// The samples run under the prefix the view's state has (or would
	// have), so that their keys are as long as the stored ones.
	samplePrefix := relPrefix(nsOpState, cat.nextID)
	if prefix != nil {
		samplePrefix = prefix
	}
	build := func() (*diff.Circuit, error) {
		return buildQueryAt(cat, query, offset, s.recursionLimit(), samplePrefix, s.Zone())
	}
	c, err := build()
	if err != nil {
		return nil, err
	}
	est, err := estimateCircuit(ctx, r, cat, c, build, samplePrefix)
	if err != nil {
		return nil, err
	}
	var meas []opCounts
	if measured != nil {
		if meas, err = measureState(r, prefix, measured.OperatorCount()); err != nil {
			return nil, err
		}
		if measured.OperatorCount() == c.OperatorCount() {
			c = measured
		} else {
			// The view's circuit was built by an older build or catalog:
			// the ids of the estimate's operators are not its.
			est = nil
		}
	}
	note := func(id int) string {
		if rel, ok := c.ScanOf(id); ok {
			if est != nil {
				return "[rows: " + fmtCount(est.rows[rel]) + "]"
			}
			return ""
		}
		stateless := (meas == nil || meas[id].keys == 0) && (est == nil || est.ops[id].keys == 0)
		if stateless {
			if est != nil {
				return "[rows out: " + fmtCount(est.ops[id].rows) + "]"
			}
			return ""
		}
		var parts []string
		if meas != nil {
			m := meas[id]
			parts = append(parts, fmt.Sprintf("state: %s keys, %s", fmtCount(m.keys), fmtSize(m.bytes)))
		}
		if est != nil {
			e := est.ops[id]
			parts = append(parts, fmt.Sprintf("estimated state: %s keys, %s", fmtCount(e.keys), fmtSize(e.bytes)),
				"rows out: "+fmtCount(e.rows))
		}
		return "[" + strings.Join(parts, "; ") + "]"
	}
	res := &Result{Columns: []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}, Tag: "EXPLAIN"}
	add := func(line string) { res.Rows = append(res.Rows, zset.Row{types.MakeText(line)}) }
	for _, line := range strings.Split(strings.TrimRight(displayExplain(c.ExplainWith(note)), "\n"), "\n") {
		add(line)
	}
	if meas != nil {
		var t opCounts
		for _, m := range meas {
			t.keys, t.bytes = t.keys+m.keys, t.bytes+m.bytes
		}
		add(fmt.Sprintf("State (measured): %s keys, %s", fmtCount(t.keys), fmtSize(t.bytes)))
	}
	if est != nil {
		var t opCounts
		for _, e := range est.ops {
			t.keys, t.bytes = t.keys+e.keys, t.bytes+e.bytes
		}
		add(fmt.Sprintf("State (estimated): %s keys, %s", fmtCount(t.keys), fmtSize(t.bytes)))
		how := "every row"
		if est.fraction < 1 {
			how = fmt.Sprintf("samples of %.3g%% and %.3g%% of the rows", 100*est.fraction, 50*est.fraction)
		}
		add(fmt.Sprintf("Estimated from %s of %s", how, strings.Join(est.inputs, ", ")))
	}
	return res, nil
}

// estimateCircuit estimates the state and output of every operator of c
// over the relations as r holds them. build returns a fresh copy of c, its
// state under prefix: each sample runs on its own, over a store in memory.
func estimateCircuit(ctx context.Context, r state.Reader, cat *catalog, c *diff.Circuit, build func() (*diff.Circuit, error), prefix []byte) (*circuitEstimate, error) {
	rels := map[string]zset.Batch{}
	// stored are the whole rows of the tables c reads by key, which a
	// sample writes where the table keeps them, instead of feeding them
	// as a delta (as a backfill does).
	stored := map[string]zset.Batch{}
	est := &circuitEstimate{fraction: 1, rows: map[string]float64{}}
	largest := 0.0
	for _, name := range c.Relations() {
		src, pos := cat.input(name)
		if src == nil {
			return nil, errs.Newf(errs.Internal, "internal error: circuit reads unknown relation %q", name)
		}
		b, err := readRelation(ctx, r, src)
		if err != nil {
			return nil, err
		}
		if c.LookedUp(name) {
			stored[name] = b
		}
		b = projectRows(b, pos)
		rels[name] = b
		var n int64
		for _, e := range b {
			n += e.Weight
		}
		est.rows[name] = float64(n)
		largest = math.Max(largest, float64(n))
		est.inputs = append(est.inputs, fmt.Sprintf("%s (%d rows)", name, n))
	}
	if largest > estimateSampleRows {
		est.fraction = estimateSampleRows / largest
	}
	run := func(frac float64) ([]opCounts, error) {
		ci, err := build()
		if err != nil {
			return nil, err
		}
		deltas := make(map[string]zset.Batch, len(rels))
		mem := state.NewMemory()
		for name, b := range rels {
			if rows, ok := stored[name]; ok {
				src, _ := cat.input(name)
				if err := applyDelta(mem, src.rowsPrefix(), sample(rows, frac), src.keyOf()); err != nil {
					return nil, err
				}
				continue
			}
			deltas[name] = sample(b, frac)
		}
		_, rows, err := ci.StepProfiled(ctx, mem, deltas)
		if err != nil {
			return nil, err
		}
		counts, err := measureState(mem, prefix, ci.OperatorCount())
		if err != nil {
			return nil, err
		}
		for id, n := range rows {
			counts[id].rows = float64(n)
		}
		return counts, nil
	}
	full, err := run(est.fraction)
	if err != nil {
		return nil, err
	}
	est.ops = full
	if est.fraction == 1 {
		return est, nil
	}
	half, err := run(est.fraction / 2)
	if err != nil {
		return nil, err
	}
	for id := range est.ops {
		e, h := &est.ops[id], half[id]
		grow := growth(e.keys, h.keys)
		if e.keys > 0 {
			e.bytes *= math.Pow(1/est.fraction, grow)
		}
		e.keys *= math.Pow(1/est.fraction, grow)
		e.rows *= math.Pow(1/est.fraction, growth(e.rows, h.rows))
	}
	return est, nil
}

// growth is the exponent α of a count that is full at fraction f and half
// at f/2: log2(full/half), clamped to [0, 2]; 1 when half is 0 and full
// is not (too few to tell).
func growth(full, half float64) float64 {
	switch {
	case full == 0:
		return 0
	case half == 0:
		return 1
	}
	return math.Min(2, math.Max(0, math.Log2(full/half)))
}

// sample returns the entries of b whose row hashes below frac of the hash
// space: the same rows every time, and a sample at frac/2 is a subset of
// the one at frac.
func sample(b zset.Batch, frac float64) zset.Batch {
	if frac >= 1 {
		return b
	}
	limit := uint64(frac * math.MaxUint64)
	var out zset.Batch
	var buf []byte
	for _, e := range b {
		buf = zset.EncodeRow(buf[:0], e.Row)
		if xxhash.Sum64(buf) < limit {
			out = append(out, e)
		}
	}
	return out
}

// measureState counts the keys and bytes of each of n operators' state
// under prefix, a circuit's state prefix.
func measureState(r state.Reader, prefix []byte, n int) ([]opCounts, error) {
	out := make([]opCounts, n)
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		if id, ok := diff.OperatorOf(prefix, k); ok && id < n {
			out[id].keys++
			out[id].bytes += float64(len(k) + len(v))
		}
		return true
	})
	return out, err
}

// fmtCount formats a count: exact below 10,000, then with a k, M or G.
func fmtCount(n float64) string {
	n = math.Round(n)
	switch {
	case n < 10_000:
		return fmt.Sprintf("%.0f", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.0fk", n/1e3)
	case n < 10_000_000_000:
		return fmt.Sprintf("%.0fM", n/1e6)
	}
	return fmt.Sprintf("%.0fG", n/1e9)
}

// fmtSize formats a number of bytes as PostgreSQL's pg_size_pretty does.
func fmtSize(n float64) string {
	n = math.Round(n)
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	u := 0
	for n >= 10*1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%.0f %s", n, units[u])
}
