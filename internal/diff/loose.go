package diff

import (
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/zset"
)

// Loose batches. An operator's contract is consolidated input and output
// (ops.Operator), and consolidating is a sort: for a large insertion
// (a bulk COPY, a view's backfill) sorting the delta at every node can
// cost more than maintaining the view. Some operators do not need it:
// filters and projections handle each row on its own, an inner join
// arranges and probes each row on its own, and an aggregate folds each
// row's weight into its group whatever the order or the repetitions. Between such operators a batch may stay loose: unsorted,
// with a row possibly repeated. Invariants:
//
//   - A node's output is left loose only when every node that reads it
//     takes loose input (lenient), and never at the root: a circuit's
//     output is consolidated.
//   - A relation's delta enters loose only when every weight is positive,
//     so that no row is evaluated that the delta would have cancelled
//     (an insertion and a deletion of a row never present, whose
//     evaluation could fail). A row that a loose batch carries with a
//     negative weight further on was present before, and its evaluation,
//     deterministic, succeeded then.
//   - An exchange into a lenient node joins the parts the workers send
//     without consolidating them.
//
// The result, state writes included, is the one consolidated batches
// give, for any number of workers: lenient operators are insensitive to
// the order and the splitting of their input rows.

// markLoose decides which nodes' outputs may stay loose, and tells the
// projections among them not to consolidate. Nodes come after their
// inputs, so walking them backwards settles every reader of a node
// before the node. A filter passes its input's order and repetitions
// on: it takes loose input only where its own output may be loose.
func (c *Circuit) markLoose() {
	readers := make([][]int, len(c.nodes))
	for i := range c.nodes {
		for _, j := range c.nodes[i].inputs {
			readers[j] = append(readers[j], i)
		}
	}
	for i := len(c.nodes) - 1; i >= 0; i-- {
		nd := &c.nodes[i]
		nd.looseOut = i != c.root && len(readers[i]) > 0
		for _, r := range readers[i] {
			nd.looseOut = nd.looseOut && c.nodes[r].lenient
		}
		switch op := nd.op.(type) {
		case *ops.Filter:
			nd.lenient = nd.looseOut
		case *ops.Project:
			op.Loose = nd.looseOut
		case *ops.Join:
			op.Loose = nd.looseOut
		}
	}
	// A projection that keeps its input's columns as they are, over an
	// aggregate (the one over a GROUP BY), passes the aggregate's output
	// on: an aggregate consolidates its output whatever looseOut says,
	// and the projection would only copy and consolidate it again. An
	// exchange joining parts of it in between would not consolidate them.
	for i := range c.nodes {
		nd := &c.nodes[i]
		op, ok := nd.op.(*ops.Project)
		if !ok {
			continue
		}
		src, ok := nd.src.(*plan.Project)
		_, overAggregate := c.nodes[nd.inputs[0]].op.(*ops.Aggregate)
		op.PassThrough = ok && overAggregate && nd.routes == nil &&
			ops.IsIdentity(op.Exprs, len(src.Input.Columns()))
	}
	c.looseRels = map[string]bool{}
	for i := range c.nodes {
		if nd := &c.nodes[i]; nd.op == nil {
			loose, seen := c.looseRels[nd.rel]
			c.looseRels[nd.rel] = nd.looseOut && (loose || !seen)
		}
	}
}

// inputOf returns the delta of rel a step starts from: the caller's batch
// itself when it may enter loose, else a consolidated copy.
func (c *Circuit) inputOf(rel string, d zset.Batch) (zset.Batch, error) {
	if c.looseRels[rel] && allPositive(d) {
		return d, nil
	}
	return consolidated(d)
}

func allPositive(b zset.Batch) bool {
	for i := range b {
		if b[i].Weight <= 0 {
			return false
		}
	}
	return true
}

// joinParts joins the parts of an exchange's input the workers sent: for
// a lenient node, side by side; for any other, consolidated.
func joinParts(nd *node, parts []zset.Batch) (zset.Batch, error) {
	if !nd.lenient {
		return mergeParts(parts)
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return concat(parts, n), nil
}
