package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
)

// This file builds the operators that depend on order or on the
// multiplicities of whole rows: INTERSECT and EXCEPT, TopK (ORDER BY ...
// LIMIT, DISTINCT ON, ROW_NUMBER filters) and window functions.

func (b *builder) setOp(n *plan.SetOp) (int, error) {
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
	name := strings.ToLower(n.Kind.String())
	formula := map[[2]bool]string{
		{false, false}: "1 if wl>0 and wr>0", {false, true}: "min(wl, wr)",
		{true, false}: "1 if wl>0 and wr=0", {true, true}: "max(wl-wr, 0)",
	}[[2]bool{n.Kind == plan.Except, n.All}]
	if n.All {
		name += " all"
	}
	id := b.add(node{
		op:      ops.NewSetOp(prefix, n.Kind, n.All),
		inputs:  []int{left, right},
		explain: fmt.Sprintf("%s  copies=%s  key=row  state=weights(row→wl, wr)", name, formula),
	})
	b.keyedBy(id, nil, nil)
	return id, nil
}

// limit builds a Limit that is not the top of an ad-hoc query: the TopK it
// computes.
func (b *builder) limit(n *plan.Limit) (int, error) {
	if n.Count < 0 && n.Offset == 0 {
		return b.build(n.Input) // LIMIT ALL
	}
	return b.topK(plan.LimitAsTopK(n))
}

func (b *builder) topK(n *plan.TopK) (int, error) {
	if n.RowNumber && n.Count < 0 {
		return 0, errs.New(errs.Internal, "a numbered TopK needs a count")
	}
	in, err := b.build(n.Input)
	if err != nil {
		return 0, err
	}
	if len(n.PartitionBy) == 0 && n.Count > 0 && n.Offset <= math.MaxInt64-n.Count && !b.serial {
		return b.splitTopK(n, in)
	}
	id, err := b.topKNode(n, in, "topk", n.PartitionBy, n.Count, n.Offset, n.RowNumber, insertOnly(n.Input))
	if err != nil {
		return 0, err
	}
	b.keyedOrSingle(id, n.PartitionBy)
	return id, nil
}

// splitTopK builds a top-k without PARTITION BY, over input node in, as a
// partial step on every worker and a final one on the first. The partial
// keeps, per bucket of the whole row, the bucket's first offset+count
// rows: every row of the global window is among its bucket's, and a
// deleted row is replaced in its bucket's by the next, which the partial
// emits. The final is the top-k itself over the union of the buckets'
// first rows, which it arranges. Every circuit over the plan is built
// so, for any number of workers: the state is the same.
func (b *builder) splitTopK(n *plan.TopK, in int) (int, error) {
	onlyInserts := insertOnly(n.Input)
	pid, err := b.topKNode(n, in, "topk (partial)", []plan.Expr{ops.RowBucket()}, n.Offset+n.Count, 0, false, onlyInserts)
	if err != nil {
		return 0, err
	}
	b.keyedBy(pid, nil)
	// The partial retracts the rows its buckets' windows lose, even over
	// insert-only input: the final's input is not insert-only.
	id, err := b.topKNode(n, pid, "topk (final)", nil, n.Count, n.Offset, n.RowNumber, false)
	if err != nil {
		return 0, err
	}
	b.nodes[id].explain += fmt.Sprintf(" of the buckets' first %d rows", n.Offset+n.Count)
	b.single(id)
	return id, nil
}

// topKNode adds a TopK node over input node in, titled title in EXPLAIN.
func (b *builder) topKNode(n *plan.TopK, in int, title string, partitionBy []plan.Expr, count, offset int64, rowNumber, onlyInserts bool) (int, error) {
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	var sb strings.Builder
	sb.WriteString(title)
	if len(partitionBy) > 0 {
		sb.WriteString("  partition=" + exprList(partitionBy))
	}
	sb.WriteString("  order=" + sortKeyList(n.Keys))
	if count >= 0 {
		fmt.Fprintf(&sb, "  limit=%d", count)
	}
	if offset > 0 {
		fmt.Fprintf(&sb, "  offset=%d", offset)
	}
	if rowNumber {
		sb.WriteString("  row_number")
	}
	sb.WriteString("  state=" + arrangementState(partitionBy, n.Keys))
	op := ops.NewTopK(prefix, partitionBy, n.Keys, count, offset, rowNumber)
	if onlyInserts {
		op.InsertOnly()
		if kept := op.Kept(); kept >= 0 {
			fmt.Fprintf(&sb, "  input=insert-only (keeps the first %d rows per partition)", kept)
		}
	}
	return b.add(node{op: op, inputs: []int{in}, explain: sb.String()}), nil
}

func (b *builder) window(n *plan.Window) (int, error) {
	in, err := b.build(n.Input)
	if err != nil {
		return 0, err
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	op, err := ops.NewWindow(prefix, n.PartitionBy, n.OrderBy, n.Funcs)
	if err != nil {
		return 0, err
	}
	var sb strings.Builder
	sb.WriteString("window")
	if len(n.PartitionBy) > 0 {
		sb.WriteString("  partition=" + exprList(n.PartitionBy))
	}
	if len(n.OrderBy) > 0 {
		sb.WriteString("  order=" + sortKeyList(n.OrderBy))
	}
	calls := make([]string, len(n.Funcs))
	for i := range n.Funcs {
		calls[i] = n.Funcs[i].String()
	}
	sb.WriteString("  funcs=[" + strings.Join(calls, ", ") + "]")
	sb.WriteString("  state=" + arrangementState(n.PartitionBy, n.OrderBy))
	id := b.add(node{op: op, inputs: []int{in}, explain: sb.String()})
	b.keyedOrSingle(id, n.PartitionBy)
	return id, nil
}

// arrangementState describes a sorted arrangement for EXPLAIN.
func arrangementState(partition []plan.Expr, keys []plan.SortKey) string {
	var parts []string
	if len(partition) > 0 {
		parts = append(parts, "partition")
	}
	if len(keys) > 0 {
		parts = append(parts, "order key")
	}
	parts = append(parts, "row")
	return "sorted(" + strings.Join(parts, ", ") + "→weight)"
}

func sortKeyList(keys []plan.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		nulls := "NULLS LAST"
		if k.NullsFirst {
			nulls = "NULLS FIRST"
		}
		parts[i] = fmt.Sprintf("%s %s %s", k.Expr, dir, nulls)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
