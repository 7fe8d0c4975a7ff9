package diff

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
)

// builder turns a plan into circuit nodes, inputs first.
type builder struct {
	prefix    ops.Prefix
	forQuery  bool
	serial    bool // no exchanges (exchange.go)
	nodes     []node
	relations []string
	nows      []*plan.Now // read by the temporal filters (temporal.go)

	// lookups, when set, says which relations inner joins may read by
	// key (lookup.go); uses counts the scans of each stored relation, and
	// lookedUp holds the scans read by key.
	lookups  Lookups
	uses     map[string]int
	lookedUp map[string]bool
	// meshRefusal is why the circuit cannot step over Peers (mesh.go).
	meshRefusal error

	// stateful holds the ids opPrefix gave out: the operators that keep
	// state (reuse.go).
	stateful map[int]bool
}

// stripOrdering removes the Sort and Limit nodes at the top of an ad-hoc
// query's plan; the caller applies them to the circuit's output.
func stripOrdering(p plan.Node) plan.Node {
	for {
		switch n := p.(type) {
		case *plan.Sort:
			p = n.Input
		case *plan.Limit:
			p = n.Input
		default:
			return p
		}
	}
}

// opPrefix is the state prefix of the operator that will get the next id:
// the circuit's prefix, then (after the bucket of each key, ops.Prefix)
// the circuit's operator part and the id, 4 bytes big-endian (fixed
// width, so no operator's prefix is a prefix of another's).
func (b *builder) opPrefix() (ops.Prefix, error) {
	id := len(b.nodes)
	if id > math.MaxUint32 {
		return ops.Prefix{}, errs.New(errs.ProgramLimitExceeded, "query has too many operators")
	}
	if b.stateful == nil {
		b.stateful = map[int]bool{}
	}
	b.stateful[id] = true
	return ops.Prefix{Circuit: b.prefix.Circuit, Op: binary.BigEndian.AppendUint32(slices.Clip(b.prefix.Op), uint32(id))}, nil
}

func (b *builder) add(n node) int {
	b.nodes = append(b.nodes, n)
	return len(b.nodes) - 1
}

// build adds the nodes of p, inputs first, and returns the id of the one
// that outputs p's rows. Each node added for p itself (not for one of its
// inputs) records p and where p's nodes start, from which its state's
// identity is derived (reuse.go).
func (b *builder) build(p plan.Node) (int, error) {
	start := len(b.nodes)
	id, err := b.buildNode(p)
	if err != nil {
		return 0, err
	}
	for i := start; i < len(b.nodes); i++ {
		if b.nodes[i].src == nil {
			b.nodes[i].src, b.nodes[i].start = p, start
		}
	}
	return id, nil
}

func (b *builder) buildNode(p plan.Node) (int, error) {
	switch n := p.(type) {
	case *plan.Scan:
		if !slices.Contains(b.relations, n.Relation) {
			b.relations = append(b.relations, n.Relation)
		}
		return b.add(node{rel: n.Relation, explain: "scan " + n.Relation + "  state=none"}), nil

	case *plan.Values:
		prefix, err := b.opPrefix()
		if err != nil {
			return 0, err
		}
		id := b.add(node{
			op:      ops.NewValues(prefix, n.Rows),
			explain: fmt.Sprintf("values  rows=%d  state=emitted-flag", len(n.Rows)),
		})
		b.single(id) // it emits its rows once, not once per worker
		return id, nil

	case *plan.Filter:
		if plan.ContainsNow(n.Pred) {
			return b.temporalFilter(n)
		}
		in, err := b.build(n.Input)
		if err != nil {
			return 0, err
		}
		return b.add(node{
			op:      &ops.Filter{Pred: n.Pred},
			inputs:  []int{in},
			explain: "filter " + n.Pred.String() + "  state=none",
		}), nil

	case *plan.Project:
		in, err := b.build(n.Input)
		if err != nil {
			return 0, err
		}
		return b.add(node{
			op:      &ops.Project{Exprs: n.Exprs},
			inputs:  []int{in},
			explain: "project " + exprList(n.Exprs) + "  state=none",
			lenient: true,
		}), nil

	case *plan.Join:
		return b.join(n)

	case *plan.Unnest:
		in, err := b.build(n.Input)
		if err != nil {
			return 0, err
		}
		explain := "unnest " + n.Array.String()
		if n.WithOrdinality {
			explain += " with ordinality"
		}
		if n.Outer {
			explain += "  left"
		}
		if n.On != nil {
			explain += "  on=" + n.On.String()
		}
		return b.add(node{
			op:      ops.NewUnnest(n.Array, n.WithOrdinality, n.Outer, n.On),
			inputs:  []int{in},
			explain: explain + "  state=none",
		}), nil

	case *plan.Aggregate:
		return b.aggregate(n)

	case *plan.Distinct:
		in, err := b.build(n.Input)
		if err != nil {
			return 0, err
		}
		prefix, err := b.opPrefix()
		if err != nil {
			return 0, err
		}
		id := b.add(node{
			op:      ops.NewDistinct(prefix),
			inputs:  []int{in},
			explain: "distinct  state=counts(row→weight)",
		})
		b.keyedBy(id, nil)
		return id, nil

	case *plan.Union:
		if len(n.Ins) == 0 {
			return 0, errs.New(errs.Internal, "UNION without inputs")
		}
		var ins []int
		for _, c := range n.Ins {
			in, err := b.build(c)
			if err != nil {
				return 0, err
			}
			ins = append(ins, in)
		}
		return b.add(node{op: ops.Union{}, inputs: ins, explain: "union all  state=none"}), nil

	case *plan.Recursive:
		return b.recursive(n)
	case *plan.WorkingTable:
		return 0, errs.Newf(errs.Internal, "recursive reference to %q outside its recursive term", n.Name)
	case *plan.TimeWindow:
		return b.timeWindow(n)

	case *plan.Sort:
		// An unordered multiset: the order of a subquery or a view is not
		// part of its result.
		return b.build(n.Input)

	case *plan.Limit:
		return b.limit(n)
	case *plan.TopK:
		return b.topK(n)
	case *plan.SetOp:
		return b.setOp(n)
	case *plan.Window:
		return b.window(n)
	}
	return 0, errs.Newf(errs.FeatureNotSupported, "plan node %T is not supported in an incremental circuit", p)
}

var joinKindNames = map[plan.JoinKind]string{
	plan.InnerJoin: "inner",
	plan.LeftJoin:  "left",
	plan.RightJoin: "right",
	plan.FullJoin:  "full",
	plan.SemiJoin:  "semi",
	plan.AntiJoin:  "anti",
	plan.MarkJoin:  "mark",
}

func (b *builder) join(n *plan.Join) (int, error) {
	kind, ok := joinKindNames[n.Kind]
	if !ok {
		return 0, errs.Newf(errs.Internal, "join kind %d is not supported", n.Kind)
	}
	if len(n.LeftKeys) != len(n.RightKeys) || len(n.NullSafe) > len(n.LeftKeys) {
		return 0, errs.New(errs.Internal, "join keys do not pair up")
	}
	semi := n.Kind == plan.SemiJoin || n.Kind == plan.AntiJoin || n.Kind == plan.MarkJoin
	if n.Test != nil && !semi {
		return 0, errs.New(errs.Internal, "a join test outside a semi-join")
	}
	left, err := b.build(n.Left)
	if err != nil {
		return 0, err
	}
	right, err := b.build(n.Right)
	if err != nil {
		return 0, err
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	lw, rw := len(n.Left.Columns()), len(n.Right.Columns())
	lkeys, rkeys := exprList(n.LeftKeys), exprList(n.RightKeys)

	var sb strings.Builder
	sb.WriteString("join " + kind)
	if len(n.LeftKeys) == 0 && n.Kind == plan.InnerJoin {
		sb.Reset()
		sb.WriteString("join cross")
	}
	if len(n.LeftKeys) > 0 {
		sb.WriteString("  on=[")
		for i := range n.LeftKeys {
			if i > 0 {
				sb.WriteString(", ")
			}
			op := " = "
			if i < len(n.NullSafe) && n.NullSafe[i] {
				op = " IS NOT DISTINCT FROM "
			}
			sb.WriteString(n.LeftKeys[i].String() + op + n.RightKeys[i].String())
		}
		sb.WriteString("]")
	}
	if n.Residual != nil {
		sb.WriteString("  residual=" + n.Residual.String())
	}
	if n.Test != nil {
		sb.WriteString("  test=" + n.Test.String())
	}
	if n.SingleMatch {
		sb.WriteString("  single-match")
	}

	var op ops.Operator
	switch n.Kind {
	case plan.InnerJoin:
		j := ops.NewJoin(prefix, n.LeftKeys, n.RightKeys, n.NullSafe, n.Residual, lw, rw)
		j.SetInputs(setRows(n.Left), setRows(n.Right))
		op = j
		lookup := b.lookupJoin(n, j)
		_, lookupLeft := j.LooksUp()
		switch {
		case lookup == "":
			fmt.Fprintf(&sb, "  state=arrangements(left by %s, right by %s)", lkeys, rkeys)
		case lookupLeft:
			fmt.Fprintf(&sb, "  state=arrangement(right by %s)  %s", rkeys, lookup)
		default:
			fmt.Fprintf(&sb, "  state=arrangement(left by %s)  %s", lkeys, lookup)
		}
	case plan.LeftJoin, plan.RightJoin, plan.FullJoin:
		if op = b.lookupOuterJoin(n, prefix, lw, rw, lkeys, rkeys, &sb); op != nil {
			break
		}
		op = ops.NewOuterJoin(prefix, n.Kind, n.LeftKeys, n.RightKeys, n.NullSafe, n.Residual, lw, rw, n.SingleMatch)
		lm, rm := "", ""
		if n.Kind != plan.RightJoin {
			lm = " with match counts"
		}
		if n.Kind != plan.LeftJoin {
			rm = " with match counts"
		}
		fmt.Fprintf(&sb, "  state=arrangements(left by %s%s, right by %s%s)", lkeys, lm, rkeys, rm)
	default:
		if op = b.lookupOuterJoin(n, prefix, lw, rw, lkeys, rkeys, &sb); op != nil {
			break
		}
		sj := ops.NewSemiJoin(prefix, n.Kind, n.LeftKeys, n.RightKeys, n.NullSafe, n.Residual, n.Test, lw, rw)
		op = sj
		switch {
		case sj.Keyed() && n.Test != nil:
			x, y, _ := ops.ProbeOf(n.Test, lw)
			fmt.Fprintf(&sb, "  state=arrangement(left by %s, %s), counts(right by %s; by %s, %s)",
				lkeys, x, rkeys, rkeys, y)
		case sj.Keyed():
			fmt.Fprintf(&sb, "  state=arrangement(left by %s), counts(right by %s)", lkeys, rkeys)
		default:
			fmt.Fprintf(&sb, "  state=arrangements(left by %s with match counts, right by %s)", lkeys, rkeys)
		}
	}
	// An inner join arranges and probes each input entry on its own: it
	// takes loose input (loose.go).
	id := b.add(node{op: op, inputs: []int{left, right}, explain: sb.String(), lenient: n.Kind == plan.InnerJoin})
	b.keyedOrSingle(id, n.LeftKeys, n.RightKeys)
	return id, nil
}

func (b *builder) aggregate(n *plan.Aggregate) (int, error) {
	in, err := b.build(n.Input)
	if err != nil {
		return 0, err
	}
	if len(n.GroupBy) == 0 && !b.serial && ops.Splittable(n.Aggs) {
		return b.splitAggregate(n, in)
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	op, err := ops.NewAggregate(prefix, n.GroupBy, n.Aggs)
	if err != nil {
		return 0, err
	}
	onlyInserts := insertOnly(n.Input)
	if onlyInserts {
		op.InsertOnly()
	}

	explain := aggExplain("aggregate", n, op, onlyInserts, false)
	if w, note, err := windowedAggregate(n, op, prefix); err != nil || w != nil {
		if err != nil {
			return 0, err
		}
		id := b.add(node{op: w, inputs: []int{in}, explain: explain + note})
		b.keyedOrSingle(id, n.GroupBy)
		return id, nil
	}
	// An aggregate folds each input row's weight into its group: it takes
	// loose input (loose.go).
	id := b.add(node{op: op, inputs: []int{in}, explain: explain, lenient: true})
	b.keyedOrSingle(id, n.GroupBy)
	return id, nil
}

// splitAggregate builds an aggregate without GROUP BY over input node in
// as a partial step on every worker and a final one on the first
// (ops.PartialAggregate). Every circuit over the plan is built so, for
// any number of workers: the state is the same.
func (b *builder) splitAggregate(n *plan.Aggregate, in int) (int, error) {
	onlyInserts := insertOnly(n.Input)
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	part, err := ops.NewPartialAggregate(prefix, n.Aggs, onlyInserts)
	if err != nil {
		return 0, err
	}
	calls := make([]string, len(n.Aggs))
	for i, c := range n.Aggs {
		calls[i] = aggString(c)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "aggregate (partial)  aggs=[%s]  state=", strings.Join(calls, ", "))
	if byBucket := part.ByBucket(); len(byBucket) == 0 {
		sb.WriteString("none")
	} else {
		fields := []string{"count"}
		for _, i := range byBucket {
			if f := n.Aggs[i].Func; !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		sb.WriteString("buckets(" + strings.Join(fields, ",") + ")")
		for _, i := range byBucket {
			fmt.Fprintf(&sb, " minmax[%s by (bucket, %s)→count]", calls[i], n.Aggs[i].Arg)
		}
	}
	explain := sb.String()
	if onlyInserts {
		explain += "  input=insert-only"
	}
	// The partial folds each row's weight into its delta or its bucket:
	// it takes loose input.
	pid := b.add(node{op: part, inputs: []int{in}, explain: explain, lenient: true})
	if part.Keyed() {
		b.keyedBy(pid, nil)
	}
	if prefix, err = b.opPrefix(); err != nil {
		return 0, err
	}
	final, err := ops.NewFinalAggregate(prefix, n.Aggs, onlyInserts)
	if err != nil {
		return 0, err
	}
	id := b.add(node{op: final, inputs: []int{pid},
		explain: aggExplain("aggregate (final)", n, final.Aggregate, onlyInserts, true)})
	b.single(id)
	return id, nil
}

// aggExplain is the EXPLAIN INCREMENTAL line of an aggregate titled
// title; ofBuckets says that its MIN and MAX arrange the extremes of the
// partials' buckets (a final step), not input values.
func aggExplain(title string, n *plan.Aggregate, op *ops.Aggregate, onlyInserts, ofBuckets bool) string {
	calls := make([]string, len(n.Aggs))
	for i, c := range n.Aggs {
		calls[i] = aggString(c)
	}
	fields := []string{"count"} // the group's row count
	for _, s := range op.StateNames() {
		if !slices.Contains(fields, s) {
			fields = append(fields, s)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s  group=%s  aggs=[%s]  state=groups(%s)",
		title, exprList(n.GroupBy), strings.Join(calls, ", "), strings.Join(fields, ","))
	if onlyInserts {
		sb.WriteString("  input=insert-only")
	}
	group := make([]string, len(n.GroupBy))
	for i, g := range n.GroupBy {
		group[i] = g.String()
	}
	for i, c := range n.Aggs {
		if !op.Arranged(i) {
			continue
		}
		kind := "distinct"
		if c.Func == "min" || c.Func == "max" {
			kind = "minmax"
		}
		if ofBuckets {
			fmt.Fprintf(&sb, " %s[%s of buckets by (%s)→count]", kind, calls[i], c.Arg.String())
			continue
		}
		keyExprs := append(slices.Clone(group), c.Arg.String())
		if c.OrderedSet() {
			kind, keyExprs = "ordered-set", slices.Clone(group)
			for _, k := range c.Order {
				e := k.Expr.String()
				if k.Desc {
					e += " DESC"
				}
				keyExprs = append(keyExprs, e)
			}
		}
		if c.Func == "string_agg" {
			kind, keyExprs = "ordered", slices.Clone(group)
			for _, k := range c.Order {
				keyExprs = append(keyExprs, k.Expr.String())
			}
			keyExprs = append(keyExprs, c.Arg.String(), c.More[0].String())
		}
		key := strings.Join(keyExprs, ", ")
		fmt.Fprintf(&sb, " %s[%s by (%s)→count]", kind, calls[i], key)
		if c.Func == "mode" {
			fmt.Fprintf(&sb, " by-count[%s by (%s)]", calls[i], strings.Join(append(slices.Clone(group), "count DESC", c.Arg.String()), ", "))
		}
	}
	return sb.String()
}

func aggString(c plan.AggCall) string { return c.String() }

func exprList(es []plan.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
