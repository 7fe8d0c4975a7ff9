package diff

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Parallelism says how many workers a step may use.
type Parallelism struct {
	// Workers is how many workers run a step; 1 (or less) runs every
	// step on the calling goroutine.
	Workers int
	// MinRows is the smallest input delta, in rows, worth splitting: a
	// smaller step runs on one worker, where it costs no goroutines and
	// no exchanges. 0 splits every step. It does not apply to a step
	// over Peers.
	MinRows int
	// Peers, when set, makes StepParallel run this process's part of a
	// step of Peers' members, one worker each (mesh.go), and Workers and
	// MinRows are not used: deltas are this process's part of the inputs
	// (any rows), st holds only the state of the buckets this member owns
	// (zset.BucketOwner(b, Members()) == Self()), and the result is this
	// member's part of the output: the sum over the members equals
	// Step's output over all their inputs.
	Peers Peers
	// Epoch names the step in Peers' exchanges (their keys' epoch):
	// every step over one mesh needs its own, so a caller stepping
	// several circuits in one epoch (or one circuit in several chunks)
	// numbers those steps apart. Every member makes the same steps over
	// one mesh, in the same order, with the same Epochs: a caller that
	// would decide by its own part of the data (how to chunk a backfill,
	// whether to spill) agrees on the decision with the others first.
	Epoch uint64
}

// DefaultMinRows is the smallest input delta a step splits between
// workers by default: a backfill or a large query. On smaller steps (a
// transaction of 1,000 Nexmark events) the exchanges cost more than the
// work they share (docs/BENCHMARKS.md, "Workers").
const DefaultMinRows = 100_000

// errAborted is what a worker returns when another worker failed first.
var errAborted = errors.New("diff: step aborted by another worker")

// StepParallel is Step with the work split between p.Workers workers.
// Each worker runs its own instance of the circuit (built on first use)
// over a contiguous part of every input delta, in an overlay of st of its
// own; the exchanges before keyed operators move rows between them
// (exchange.go), and the workers' writes, which touch disjoint keys, are
// applied to st once every worker has finished. The result equals Step's
// for any number of workers; on error nothing is written to st.
//
// With p.Peers set it is this member's part of a step across processes
// (mesh.go).
func (c *Circuit) StepParallel(ctx context.Context, st state.Store, deltas map[string]zset.Batch, p Parallelism) (zset.Batch, error) {
	if p.Peers != nil {
		return c.stepMesh(ctx, st, deltas, p)
	}
	n := p.Workers
	if n <= 1 || inputRows(c, deltas) < p.MinRows {
		return c.Step(ctx, st, deltas)
	}
	if err := c.instances(n); err != nil {
		return nil, err
	}
	parts := make([]map[string]zset.Batch, n)
	for i := range parts {
		parts[i] = make(map[string]zset.Batch, len(c.relations))
	}
	for _, rel := range c.relations {
		d, err := c.inputOf(rel, deltas[rel])
		if err != nil {
			return nil, err
		}
		for i := range n {
			parts[i][rel] = d[len(d)*i/n : len(d)*(i+1)/n]
		}
	}
	out, _, err := c.stepParts(ctx, st, parts, c.placedByKey())
	return out, err
}

// placedByKey marks, by node, the inputs that a keyed node before them
// has already placed as their exchange would (routed.go), computed once.
func (c *Circuit) placedByKey() map[int][]bool {
	c.keyedOnce.Do(func() { c.keyedMarks, _ = c.inPlace(nil) })
	return c.keyedMarks
}

// stepParts runs a parallel step over the workers' parts of the input
// deltas (parts[i] is worker i's), returning its output and the hub the
// workers met in. inPlace marks, by node, the inputs whose rows already
// lie on their owners (routed.go), which its exchange leaves where they
// are.
func (c *Circuit) stepParts(ctx context.Context, st state.Store, parts []map[string]zset.Batch, inPlace map[int][]bool) (zset.Batch, *hub, error) {
	n := len(parts)
	h := newHub(n, len(c.nodes))
	h.inPlace = inPlace
	ovs := make([]*state.Overlay, n)
	outs := make([]zset.Batch, n)
	errsOf := make([]error, n)
	for i := range ovs {
		ovs[i] = state.NewOverlay(st)
	}
	run := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				errsOf[i] = errs.Newf(errs.Internal, "internal error in worker %d: %v\n%s", i, r, debug.Stack())
				h.fail()
			}
		}()
		inst := c
		if i > 0 {
			inst = c.workers[i-1]
		}
		outs[i], errsOf[i] = inst.stepWorker(ctx, ovs[i], parts[i], h, i, 0)
		if errsOf[i] != nil {
			h.fail()
		}
	}
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); run(i) }()
	}
	run(0) // the calling goroutine is the first worker
	wg.Wait()
	if err := firstError(errsOf); err != nil {
		for _, ov := range ovs {
			ov.Discard()
		}
		return nil, h, err
	}
	out, err := mergeWhileCommitting(outs, ovs)
	return out, h, err
}

// mergeBesideMinRows is the smallest output, in rows, of a parallel step
// whose parts are summed (mergeParts) on a goroutine of their own while
// the workers' overlays are committed into the step's store: the two
// touch disjoint memory (the parts, the overlays and their parent), and
// both are serial. Below it a goroutine costs more than the overlap
// gains.
const mergeBesideMinRows = 1024

// mergeWhileCommitting commits the workers' overlays into their parent,
// in worker order, and returns the sum of the workers' outputs, the two
// beside each other when the outputs are large.
func mergeWhileCommitting(outs []zset.Batch, ovs []*state.Overlay) (zset.Batch, error) {
	rows, nonEmpty := 0, 0
	for _, o := range outs {
		if len(o) > 0 {
			rows += len(o)
			nonEmpty++
		}
	}
	if nonEmpty < 2 || rows < mergeBesideMinRows {
		for _, ov := range ovs {
			if err := ov.Commit(); err != nil {
				return nil, err
			}
		}
		return mergeParts(outs)
	}
	var (
		out      zset.Batch
		mergeErr error
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				mergeErr = errs.Newf(errs.Internal, "internal error merging the workers' outputs: %v\n%s", r, debug.Stack())
			}
		}()
		out, mergeErr = mergeParts(outs)
	}()
	var err error
	for _, ov := range ovs {
		if err = ov.Commit(); err != nil {
			break
		}
	}
	<-done
	if err != nil {
		return nil, err
	}
	return out, mergeErr
}

// mergeParts sums consolidated batches into one consolidated batch. A
// lone non-empty part is already the sum, and is returned as it is.
func mergeParts(parts []zset.Batch) (zset.Batch, error) {
	n, nonEmpty, last := 0, 0, -1
	for i, p := range parts {
		if len(p) > 0 {
			n += len(p)
			nonEmpty++
			last = i
		}
	}
	switch nonEmpty {
	case 0:
		return nil, nil
	case 1:
		return parts[last], nil
	}
	return zset.Consolidate(concat(parts, n))
}

// concat returns the parts, of n entries in all, one after the other.
func concat(parts []zset.Batch, n int) zset.Batch {
	out := make(zset.Batch, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// firstError returns the first worker's error that is not errAborted:
// the cause, not its echo in the workers it stopped.
func firstError(es []error) error {
	var aborted error
	for _, err := range es {
		switch {
		case err == nil:
		case errors.Is(err, errAborted):
			aborted = err
		default:
			return err
		}
	}
	return aborted
}

// inputRows counts the rows of the deltas the circuit reads.
func inputRows(c *Circuit, deltas map[string]zset.Batch) int {
	n := 0
	for _, rel := range c.relations {
		n += len(deltas[rel])
	}
	return n
}

// instances makes sure the circuit has n-1 sibling instances, built from
// the same plan, for workers 1 to n-1.
func (c *Circuit) instances(n int) error {
	for len(c.workers) < n-1 {
		w, err := buildWith(c.plan, c.prefix, c.forQuery, false, c.lookups)
		if err != nil {
			return fmt.Errorf("building a worker's circuit: %w", err)
		}
		w.emitted = c.emitted
		c.workers = append(c.workers, w)
	}
	return nil
}

// stepWorker runs the circuit over consolidated input deltas. With a hub
// it is worker me's part of a parallel step: it exchanges rows with the
// other workers before every node whose inputs are routed (exchange.go),
// and skips single nodes unless it is the single worker; every worker
// passes every exchange, in node order, so that the exchanges line up.
// Without one (Step) it is the whole step on one worker. A ParallelOperator
// runs on every worker, with an exchange over the hub; scope tells the
// exchanges of a nested circuit (a recursive query's body, scope its
// node's index + 1) from the outer circuit's (scope 0).
func (c *Circuit) stepWorker(ctx context.Context, st state.Store, deltas map[string]zset.Batch, h meeting, me, scope int) (zset.Batch, error) {
	outs := make([]zset.Batch, len(c.nodes))
	var (
		pt    partitioner
		parts []zset.Batch
	)
	if h != nil {
		parts = make([]zset.Batch, h.workers())
	}
	for i := range c.nodes {
		nd := &c.nodes[i]
		if nd.op == nil {
			c.countEmitted(i, len(deltas[nd.rel]))
			outs[i] = deltas[nd.rel]
			if c.profile != nil {
				c.profile[i] += int64(len(outs[i]))
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.ins = c.ins[:0]
		for _, j := range nd.inputs {
			c.ins = append(c.ins, outs[j])
		}
		var inPlace []bool
		if h != nil && scope == 0 {
			inPlace = h.placed(i)
		}
		if h != nil && nd.exchanged() && !allInPlace(nd, inPlace) {
			x := boxKey{scope, i}
			for k, r := range nd.routes {
				if r.kind == routeLocal || (inPlace != nil && inPlace[k]) {
					continue
				}
				if err := pt.partition(c.ins[k], r, parts); err != nil {
					return nil, err
				}
				if err := h.send(x, len(nd.inputs), k, me, parts); err != nil {
					return nil, err
				}
			}
			if err := h.wait(); err != nil {
				return nil, err
			}
			for k, r := range nd.routes {
				if r.kind == routeLocal || (inPlace != nil && inPlace[k]) {
					continue
				}
				h.receive(x, len(nd.inputs), k, me, parts)
				in, err := joinParts(nd, parts)
				if err != nil {
					return nil, err
				}
				c.ins[k] = in
			}
		}
		for _, j := range nd.inputs {
			outs[j] = nil
		}
		if nd.single && (h != nil && me != singleWorker(h.workers())) {
			continue
		}
		var out zset.Batch
		var err error
		if po, ok := nd.op.(ops.ParallelOperator); ok && h != nil {
			out, err = po.StepOn(ctx, st, c.ins, &workerExchange{m: h, me: me, key: boxKey{i + 1, -1}})
		} else {
			out, err = nd.op.Step(ctx, st, c.ins)
		}
		if err != nil {
			return nil, err
		}
		c.countEmitted(i, len(out))
		outs[i] = out
		if c.profile != nil {
			c.profile[i] += int64(len(out))
		}
	}
	clear(c.ins)
	return outs[c.root], nil
}

// meeting is where the workers of one parallel step meet: the hub of a
// step's in-process workers, or a mesh of processes (mesh.go). An
// exchange is every worker's send of each routed input, then wait, then
// receive of each; every worker passes the same exchanges in the same
// order.
type meeting interface {
	// workers is how many workers take part.
	workers() int
	// placed marks the inputs of node (of the outer circuit) already on
	// their owners, which its exchange leaves where they are (nil: none).
	placed(node int) []bool
	// send gives worker me's parts of input k of exchange x, of a node
	// with inputs inputs: parts[to] for worker to. The batches are not
	// modified afterwards; parts itself is, by the next send.
	send(x boxKey, inputs, k, me int, parts []zset.Batch) error
	// wait returns once every worker has sent its parts of the exchange.
	wait() error
	// receive sets parts[from] to what worker from sent worker me.
	receive(x boxKey, inputs, k, me int, parts []zset.Batch)
	// maxOf is an agreement: the largest value the workers passed.
	maxOf(me int, v int64) (int64, error)
}

// hub is where the in-process workers of one parallel step meet: a
// barrier per exchange, and the boxes the rows of each exchange are left
// in.
//
// A box is written before a barrier and read after it. A box used more
// than once in a step (a recursive query's body runs once per iteration)
// is written again only after one more barrier, which every worker
// passes after it has read the box: the next exchange, or the agreement
// on whether to iterate again (workerExchange).
type hub struct {
	n int
	// reduced holds the values the workers pass to an agreement
	// (allReduce), by parity of the agreement's number, then by worker;
	// agreements[w] counts worker w's agreements, touched by it alone.
	reduced    [2][]int64
	agreements []int
	// inPlace marks, by node of the outer circuit, the inputs already on
	// their owners, which the node's exchange does not move (routed.go);
	// moved counts the rows the exchanges sent to another worker, and
	// partitioned the inputs they split (by every worker).
	inPlace     map[int][]bool
	moved       atomic.Int64
	partitioned atomic.Int64

	mu struct {
		sync.Mutex
		cond    sync.Cond
		boxes   map[boxKey][]zset.Batch // by slot
		arrived int
		round   uint64
		failed  bool
	}
}

// boxKey names the boxes of one exchange: by the circuit's scope (0 for
// the outer circuit) and the node (-1 for a nested circuit's own
// exchange of rows).
type boxKey struct{ scope, node int }

func newHub(n, nodes int) *hub {
	h := &hub{n: n, agreements: make([]int, n)}
	h.reduced[0], h.reduced[1] = make([]int64, n), make([]int64, n)
	h.mu.boxes = make(map[boxKey][]zset.Batch, nodes)
	h.mu.cond.L = &h.mu.Mutex
	return h
}

// box returns the boxes of k, made by the first worker to reach it.
func (h *hub) box(k boxKey, inputs int) []zset.Batch {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.mu.boxes[k]
	if b == nil {
		b = make([]zset.Batch, inputs*h.n*h.n)
		h.mu.boxes[k] = b
	}
	return b
}

func (h *hub) workers() int { return h.n }

func (h *hub) placed(node int) []bool { return h.inPlace[node] }

// send leaves worker me's parts of input k of exchange x (parts[to] for
// worker to) in the exchange's boxes.
func (h *hub) send(x boxKey, inputs, k, me int, parts []zset.Batch) error {
	box := h.box(x, inputs)
	h.partitioned.Add(1)
	for to := range h.n {
		box[h.slot(k, me, to)] = parts[to]
		if to != me {
			h.moved.Add(int64(len(parts[to])))
		}
	}
	return nil
}

// receive takes, after wait, what every worker left worker me of input k
// of exchange x: parts[from] for worker from.
func (h *hub) receive(x boxKey, inputs, k, me int, parts []zset.Batch) {
	box := h.box(x, inputs)
	for from := range h.n {
		parts[from] = box[h.slot(k, from, me)]
	}
}

// maxOf is allReduce by max.
func (h *hub) maxOf(me int, v int64) (int64, error) { return h.allReduce(me, v, maxInt64) }

// allReduce passes worker me's value v to an agreement of every worker
// and returns the values combined by f. Consecutive agreements use
// alternate slots: a worker can write the slot of agreement k+2 only
// after every worker has reached agreement k+1, so after it has read
// agreement k's.
func (h *hub) allReduce(me int, v int64, f func(a, b int64) int64) (int64, error) {
	p := h.agreements[me] % 2
	h.agreements[me]++
	h.reduced[p][me] = v
	if err := h.wait(); err != nil {
		return 0, err
	}
	r := h.reduced[p][0]
	for _, x := range h.reduced[p][1:] {
		r = f(r, x)
	}
	return r, nil
}

// slot is where, among a node's boxes, the rows of its input that worker
// from sends worker to are left.
func (h *hub) slot(input, from, to int) int { return (input*h.n+from)*h.n + to }

// wait blocks until every worker has reached the same exchange, or one
// has failed (errAborted). What a worker left in the boxes before wait is
// visible to every worker after it.
func (h *hub) wait() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.failed {
		return errAborted
	}
	round := h.mu.round
	h.mu.arrived++
	if h.mu.arrived == h.n {
		h.mu.arrived = 0
		h.mu.round++
		h.mu.cond.Broadcast()
		return nil
	}
	for round == h.mu.round && !h.mu.failed {
		h.mu.cond.Wait()
	}
	if round == h.mu.round {
		return errAborted
	}
	return nil
}

// fail stops the step: every worker waiting at an exchange, or reaching
// one later, gets errAborted.
func (h *hub) fail() {
	h.mu.Lock()
	h.mu.failed = true
	h.mu.cond.Broadcast()
	h.mu.Unlock()
}
