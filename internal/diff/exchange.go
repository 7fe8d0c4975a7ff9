package diff

import (
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A circuit runs on one worker or on several (workers.go). On several,
// each worker runs its own instance of the circuit over its part of the
// input, and the state every operator keeps is partitioned between them
// by the operator's key: an operator whose state is keyed (an aggregate's
// groups, a join's arrangements, distinct rows, a top-k's or window's
// partitions) must see every row of a key on one worker. The builder
// marks, for each such operator, how each of its inputs is routed: an
// exchange before it sends every row to the worker owning the bucket of
// the row's key (zset.Bucket, zset.BucketOwner). An operator whose state
// is not keyed (a window without PARTITION BY, a cross join, VALUES) is
// single: its inputs are gathered onto the worker owning the bucket of
// the empty key (singleWorker), where its state is (ops.Prefix), and it
// runs there alone. A recursive query's fixpoint runs on every worker
// (ops.ParallelOperator): its inputs are routed by the whole row, and
// its instances iterate together through a workerExchange, their
// bodies exchanging rows at every iteration under the hub's scope of the
// fixpoint's node. An aggregate without GROUP BY whose
// aggregates merge, and a top-k with a count and without PARTITION BY,
// are split: a partial step runs on every worker (keyed, when it keeps
// state, by the bucket of the whole row) and a single final step
// combines what the partials emit (build.go splitAggregate, build_order.go
// splitTopK). Linear operators run wherever their input is.
//
// Because an operator's state is keyed by the data, not by the worker,
// the store a circuit's state lives in is the same for any number of
// workers: a circuit may run on one worker in one epoch and on three in
// the next, and its results never depend on it.
//
// The workers of a step meet through a meeting: the hub of in-process
// workers, which share one store (workers.go), or a mesh of processes,
// one worker each, each with its own store holding the state of the
// buckets it owns (mesh.go, Parallelism.Peers). The exchanges are the
// same in both, and so are the keys every operator's state is stored
// under: the union of the members' stores is the store of the same
// steps on one worker.

// routeKind says how one input of a node reaches the workers.
type routeKind uint8

const (
	// routeLocal keeps a row on the worker that produced it.
	routeLocal routeKind = iota
	// routeKey sends a row to the owner of its key's bucket.
	routeKey
	// routeRow sends a row to the owner of the bucket of the whole row.
	routeRow
	// routeOne sends every row to the single worker (singleWorker).
	routeOne
)

// route is how one input of a node is exchanged between workers.
type route struct {
	kind routeKind
	key  []plan.Expr // routeKey: the key, over the input's columns
}

// keyedBy marks node id as keyed: input k is exchanged by keys[k] (nil
// or empty: the whole row).
func (b *builder) keyedBy(id int, keys ...[]plan.Expr) {
	if b.serial {
		return
	}
	n := &b.nodes[id]
	n.routes = make([]route, len(n.inputs))
	for k := range n.inputs {
		if k < len(keys) && len(keys[k]) > 0 {
			n.routes[k] = route{kind: routeKey, key: keys[k]}
		} else {
			n.routes[k] = route{kind: routeRow}
		}
	}
}

// keyedOrSingle marks node id as keyed by keys (one list per input) when
// the first is not empty, and as single otherwise.
func (b *builder) keyedOrSingle(id int, keys ...[]plan.Expr) {
	if len(keys) > 0 && len(keys[0]) > 0 {
		b.keyedBy(id, keys...)
		return
	}
	b.single(id)
}

// single marks node id as running on the single worker alone, its inputs
// gathered there.
func (b *builder) single(id int) {
	if b.serial {
		return
	}
	n := &b.nodes[id]
	n.single = true
	n.routes = make([]route, len(n.inputs))
	for k := range n.routes {
		n.routes[k] = route{kind: routeOne}
	}
}

// exchanged reports whether any input of n moves between workers.
func (n *node) exchanged() bool {
	for _, r := range n.routes {
		if r.kind != routeLocal {
			return true
		}
	}
	return false
}

// singleWorker is the worker of n that runs the single nodes: the owner
// of the bucket of the empty key, which holds their state.
func singleWorker(n int) int { return zset.BucketOwner(zset.Bucket(nil), n) }

// partitioner splits batches between workers by a route, reusing its
// scratch memory from one batch to the next.
type partitioner struct {
	keyBuf []byte
	vals   []types.Value
	owners []uint8 // the worker of each row of the batch being split
	counts []int
}

// partition splits b into one batch per worker by r, into parts (of one
// entry per worker). Each part keeps b's order, so the parts of a
// consolidated batch are consolidated. It finds every row's worker
// first, so that each part is allocated once, at its size.
func (pt *partitioner) partition(b zset.Batch, r route, parts []zset.Batch) error {
	workers := len(parts)
	clear(parts)
	if len(b) == 0 {
		return nil
	}
	if r.kind == routeOne {
		parts[singleWorker(workers)] = b
		return nil
	}
	pt.owners = slices.Grow(pt.owners[:0], len(b))[:len(b)]
	pt.counts = slices.Grow(pt.counts[:0], workers)[:workers]
	clear(pt.counts)
	for i := range b {
		row := b[i].Row
		switch r.kind {
		case routeKey:
			pt.vals = pt.vals[:0]
			for _, x := range r.key {
				v, err := x.Eval(row)
				if err != nil {
					return err
				}
				pt.vals = append(pt.vals, v)
			}
			pt.keyBuf = zset.EncodeKey(pt.keyBuf[:0], pt.vals...)
		default:
			pt.keyBuf = zset.EncodeKey(pt.keyBuf[:0], row...)
		}
		w := zset.BucketOwner(zset.Bucket(pt.keyBuf), workers)
		pt.owners[i] = uint8(w)
		pt.counts[w]++
	}
	for w, n := range pt.counts {
		if n == len(b) {
			parts[w] = b // every row goes to one worker
			return nil
		}
	}
	for w, n := range pt.counts {
		if n > 0 {
			parts[w] = make(zset.Batch, 0, n)
		}
	}
	for i, w := range pt.owners {
		parts[w] = append(parts[w], b[i])
	}
	return nil
}

// explainRoute renders the exchange line of a routed input in EXPLAIN
// INCREMENTAL.
func explainRoute(sb *strings.Builder, r route, depth int) {
	sb.WriteString(strings.Repeat("  ", depth))
	switch r.kind {
	case routeKey:
		sb.WriteString("exchange  key=" + exprList(r.key))
	case routeRow:
		sb.WriteString("exchange  key=row")
	case routeOne:
		sb.WriteString("exchange  gather (one worker)")
	}
	sb.WriteByte('\n')
}

// workerExchange is the ops.Exchange of worker me's instance of a
// ParallelOperator, where the step's workers meet: key names the
// exchange of its own rows (ByRow), and key.scope is the scope of the
// exchanges of its nested circuit.
type workerExchange struct {
	m     meeting
	me    int
	key   boxKey
	parts []zset.Batch
	pt    partitioner
}

func (x *workerExchange) Any(local bool) (bool, error) {
	v := int64(0)
	if local {
		v = 1
	}
	r, err := x.m.maxOf(x.me, v)
	return r != 0, err
}

func (x *workerExchange) Max(local int64) (int64, error) { return x.m.maxOf(x.me, local) }

func maxInt64(a, b int64) int64 { return max(a, b) }

func (x *workerExchange) ByRow(b zset.Batch) (zset.Batch, error) {
	if x.parts == nil {
		x.parts = make([]zset.Batch, x.m.workers())
	}
	if err := x.pt.partition(b, route{kind: routeRow}, x.parts); err != nil {
		return nil, err
	}
	if err := x.m.send(x.key, 1, 0, x.me, x.parts); err != nil {
		return nil, err
	}
	if err := x.m.wait(); err != nil {
		return nil, err
	}
	x.m.receive(x.key, 1, 0, x.me, x.parts)
	return mergeParts(x.parts)
}
