package diff

import (
	"context"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Routed input. A relation's delta may reach a parallel step already
// split between the workers by the bucket of each row's routing key (a
// table's primary key, else its whole row): the store keeps a relation's
// rows by that bucket, so a caller that writes them split between the
// workers by bucket has the split already. Each worker then starts from
// its own part, and an exchange keyed like the part's routing key (the
// key's columns reached through filters, and projections that pass them
// on) leaves the rows where they are: they already lie on the worker
// owning their key's bucket, which is where the exchange would send them.
//
// The same holds within any parallel step after a keyed node: an inner
// join's output rows lie on the owner of their left key, a grouped
// aggregate's on the owner of their group key, DISTINCT's on the owner
// of their row, so an exchange keyed like that (placedByKey) would send
// every row to the worker it is on, and is skipped; what it would have
// joined is then exactly the worker's own rows, in their order.
//
// Invariants:
//   - A routed part holds exactly the rows whose routing key's bucket
//     (zset.Bucket of zset.EncodeKey of the key's values) its worker owns
//     (zset.BucketOwner); the caller guarantees it.
//   - The step is StepParallel's over the whole deltas: the same output,
//     error code and state writes, byte for byte, for any number of
//     workers; a step below Parallelism.MinRows runs over the deltas.

// Routed is a relation's delta split between the workers of a step.
type Routed struct {
	// Key lists the routing key's columns; nil routes by the whole row.
	Key []int
	// Parts holds worker i's rows at i, one part per worker.
	Parts []zset.Batch
}

// StepRouted is StepParallel over deltas, of which those in routed come
// split between the workers too: routed[rel].Parts is a split of
// deltas[rel], each part keeping the rows in their order in it. When the
// step is not split (fewer rows than p.MinRows, one worker), when a
// routed delta has not one part per worker, or when the circuit would
// exchange rows of the parts (inPlace), it runs as StepParallel over
// deltas; over Peers, routed is not used (the exchanges place the rows).
func (c *Circuit) StepRouted(ctx context.Context, st state.Store, deltas map[string]zset.Batch, routed map[string]Routed, p Parallelism) (zset.Batch, error) {
	out, _, err := c.stepRouted(ctx, st, deltas, routed, p)
	return out, err
}

// stepRouted is StepRouted; it also returns the hub of a step split over
// the routed parts (nil for any other), which counts the rows its
// exchanges moved.
func (c *Circuit) stepRouted(ctx context.Context, st state.Store, deltas map[string]zset.Batch, routed map[string]Routed, p Parallelism) (zset.Batch, *hub, error) {
	if p.Peers != nil {
		out, err := c.StepParallel(ctx, st, deltas, p)
		return out, nil, err
	}
	n := p.Workers
	use := n > 1 && inputRows(c, deltas) >= p.MinRows
	for _, rel := range c.relations {
		if r, ok := routed[rel]; ok {
			use = use && len(r.Parts) == n
		}
	}
	var marks map[int][]bool
	if use {
		marks, use = c.inPlace(routed)
		use = use && marks != nil
	}
	if !use {
		out, err := c.StepParallel(ctx, st, deltas, p)
		return out, nil, err
	}
	if err := c.instances(n); err != nil {
		return nil, nil, err
	}
	parts := make([]map[string]zset.Batch, n)
	for i := range parts {
		parts[i] = make(map[string]zset.Batch, len(c.relations))
	}
	for _, rel := range c.relations {
		if r, ok := routed[rel]; ok {
			// Whether the delta enters loose is decided on the whole of
			// it, as StepParallel decides.
			loose := c.looseRels[rel] && allPositive(deltas[rel])
			for i := range n {
				d := r.Parts[i]
				if !loose {
					var err error
					if d, err = consolidated(d); err != nil {
						return nil, nil, err
					}
				}
				parts[i][rel] = d
			}
			continue
		}
		d, err := c.inputOf(rel, deltas[rel])
		if err != nil {
			return nil, nil, err
		}
		for i := range n {
			parts[i][rel] = d[len(d)*i/n : len(d)*(i+1)/n]
		}
	}
	return c.stepParts(ctx, st, parts, marks)
}

// placement is how the rows of a node's output lie between the workers
// of a routed step: when placed, each on the owner of the bucket of its
// key, the whole row or the columns cols.
type placement struct {
	placed bool
	whole  bool
	cols   []int
}

// inPlace marks, by node, the inputs whose rows the routed deltas have
// already placed as the node's exchange would (nil when there is none),
// and reports whether the routed parts may be used at all: only when
// every way out of a routed relation, through the nodes without
// exchanges, ends at an exchange that leaves its rows in place. Rows that
// an exchange moves, or that reach the output unexchanged, are joined in
// the order of the workers that sent them, and a part is in its
// relation's order only within itself: the step would see equal rows of
// different representations (1.5 and 1.50) in another order than
// StepParallel's contiguous parts give, and could keep the other one.
// Where the exchange keeps rows in place, each worker's rows of each key
// are in the same order as with contiguous parts.
func (c *Circuit) inPlace(routed map[string]Routed) (map[int][]bool, bool) {
	pl := make([]placement, len(c.nodes))
	from := make([]bool, len(c.nodes)) // the rows derive from routed rows not yet exchanged
	var marks map[int][]bool
	for i := range c.nodes {
		nd := &c.nodes[i]
		if nd.op == nil {
			if r, ok := routed[nd.rel]; ok {
				pl[i] = placement{placed: true, whole: r.Key == nil, cols: r.Key}
				from[i] = true
			}
			continue
		}
		if len(nd.routes) > 0 {
			for k, r := range nd.routes {
				j := nd.inputs[k]
				if r.kind == routeLocal || !pl[j].satisfies(r) {
					if from[j] {
						return nil, false
					}
					continue
				}
				if marks == nil {
					marks = map[int][]bool{}
				}
				if marks[i] == nil {
					marks[i] = make([]bool, len(nd.inputs))
				}
				marks[i][k] = true
			}
			pl[i] = keyedOutput(nd)
			continue
		}
		for _, j := range nd.inputs {
			from[i] = from[i] || from[j]
		}
		switch op := nd.op.(type) {
		case *ops.Filter:
			pl[i] = pl[nd.inputs[0]]
		case *ops.Project:
			pl[i] = pl[nd.inputs[0]].project(op.Exprs)
		}
	}
	return marks, !from[c.root]
}

// keyedOutput is the placement of the output of keyed node nd, whose
// inputs its exchanges have placed by its key: each output row is on the
// worker of its input rows' key, which it carries in its own columns
// for an inner join and a semi-, anti- or mark join (the left input's
// key columns, in place), a top-k or window function partitioned by
// columns (its input's columns come first, in place), a grouped
// aggregate (its group key, the output's first columns) and DISTINCT
// (the whole row). Any other node's output is not tracked.
func keyedOutput(nd *node) placement {
	r := nd.routes[0]
	switch nd.op.(type) {
	case *ops.Distinct:
		if r.kind == routeRow {
			return placement{placed: true, whole: true}
		}
	case *ops.Aggregate:
		if r.kind == routeKey {
			cols := make([]int, len(r.key))
			for m := range cols {
				cols[m] = m
			}
			return placement{placed: true, cols: cols}
		}
	case *ops.Join, *ops.SemiJoin, *ops.TopK, *ops.Window:
		if r.kind == routeKey {
			cols := make([]int, len(r.key))
			for m, x := range r.key {
				ref, ok := x.(*plan.ColRef)
				if !ok {
					return placement{}
				}
				cols[m] = ref.Index
			}
			return placement{placed: true, cols: cols}
		}
	}
	return placement{}
}

// satisfies reports whether rows placed by p lie where route r sends
// them.
func (p placement) satisfies(r route) bool {
	if !p.placed {
		return false
	}
	switch r.kind {
	case routeRow:
		return p.whole
	case routeKey:
		if p.whole || len(p.cols) != len(r.key) {
			return false
		}
		for m, x := range r.key {
			ref, ok := x.(*plan.ColRef)
			if !ok || ref.Index != p.cols[m] {
				return false
			}
		}
		return true
	}
	return false
}

// project is the placement of the output of a projection by exprs of
// rows placed by p: by the key's columns where the projection passes
// them on, else none.
func (p placement) project(exprs []plan.Expr) placement {
	if !p.placed || p.whole {
		return placement{}
	}
	cols := make([]int, len(p.cols))
	for m, c := range p.cols {
		cols[m] = -1
		for o, x := range exprs {
			if ref, ok := x.(*plan.ColRef); ok && ref.Index == c {
				cols[m] = o
				break
			}
		}
		if cols[m] < 0 {
			return placement{}
		}
	}
	return placement{placed: true, cols: cols}
}

// allInPlace reports whether every input nd exchanges is marked in
// place, so that its exchange moves nothing and is skipped.
func allInPlace(nd *node, inPlace []bool) bool {
	if inPlace == nil {
		return false
	}
	for k, r := range nd.routes {
		if r.kind != routeLocal && !inPlace[k] {
			return false
		}
	}
	return true
}
