package diff

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Circuit is the incremental form of one query. Its operators keep their
// state in the store passed to Step, under the key prefix given to Build.
// A Circuit keeps scratch buffers in its operators and is not safe for
// concurrent use.
type Circuit struct {
	// nodes in topological order (every node after its inputs); a node's
	// index is its operator id.
	nodes     []node
	root      int
	relations []string
	// looseRels are the relations whose deltas may enter loose.
	looseRels map[string]bool
	ins       []zset.Batch // scratch for one node's inputs
	// emitted counts each operator's output rows, shared by the worker
	// instances (observe.go); nil in a nested circuit.
	emitted []atomic.Uint64

	// What Build was given, to build the instances of the other workers
	// (workers.go), which workers holds once they are built.
	plan     plan.Node
	prefix   ops.Prefix
	forQuery bool
	workers  []*Circuit

	// keyedMarks are the inputs a keyed node has placed already
	// (placedByKey), computed once.
	keyedOnce  sync.Once
	keyedMarks map[int][]bool
	// profile, while StepProfiled runs, counts each node's output rows.
	profile []int64
	// nows are the now() calls its temporal filters read (temporal.go).
	nows []*plan.Now
	// lookups is what BuildView was given, and lookedUp the relations
	// the circuit reads by key only (lookup.go).
	lookups  Lookups
	lookedUp map[string]bool
	// meshRefusal, when set, is why the circuit cannot step over Peers
	// (mesh.go).
	meshRefusal error
}

// node is one operator of a circuit.
type node struct {
	op     ops.Operator // nil for a scan
	rel    string       // the relation a scan reads
	inputs []int
	// explain is the node's EXPLAIN INCREMENTAL text, without indentation
	// (one line, or more for a node holding a nested circuit).
	explain string
	// labels, when set, name the node's inputs in EXPLAIN.
	labels []string
	// routes, when set, says how each input is exchanged between
	// workers, and single that the node runs on the single worker alone
	// (exchange.go).
	routes []route
	single bool
	// lenient nodes take loose input, and looseOut ones may leave their
	// output loose (loose.go).
	lenient, looseOut bool
	// src is the plan node this node was built for, start the id of the
	// first node built for src's subtree, and stateful whether the node
	// keeps state under its operator prefix (reuse.go).
	src      plan.Node
	start    int
	stateful bool
}

// Build differentiates p. Every key the circuit's operators write starts
// with prefix. Constructs outside the supported set fail with 0A000 naming
// the construct. When forQuery is true (ad-hoc SELECT), the Sort and
// Limit at the top of p are left out; the caller applies them.
//
// A Sort anywhere else is dropped: a materialized view, like any
// subquery result, is an unordered multiset, so ORDER BY without LIMIT
// does not change it. A Limit anywhere else (at the top of a view's plan,
// say) is the TopK it computes (LIMIT ALL, which changes nothing, is
// dropped).
func Build(p plan.Node, prefix []byte, forQuery bool) (*Circuit, error) {
	c, err := build(p, ops.Prefix{Circuit: slices.Clone(prefix)}, forQuery, false)
	if err == nil {
		c.emitted = newEmitted(len(c.nodes))
	}
	return c, err
}

// build is Build; a serial circuit (the body of a recursive query, which
// its Fixpoint runs on one worker) has no exchanges.
func build(p plan.Node, prefix ops.Prefix, forQuery, serial bool) (*Circuit, error) {
	return buildWith(p, prefix, forQuery, serial, nil)
}

// buildWith is build with the lookups of BuildView (nil: none).
func buildWith(p plan.Node, prefix ops.Prefix, forQuery, serial bool, lookups Lookups) (*Circuit, error) {
	if forQuery {
		p = stripOrdering(p)
	}
	b := &builder{prefix: prefix, forQuery: forQuery, serial: serial, lookups: lookups}
	if lookups != nil {
		b.uses = scanUses(p, lookups)
	}
	root, err := b.build(p)
	if err != nil {
		return nil, err
	}
	for id := range b.stateful {
		if id < len(b.nodes) {
			b.nodes[id].stateful = true
		}
	}
	c := &Circuit{nodes: b.nodes, root: root, relations: b.relations,
		plan: p, prefix: b.prefix, forQuery: forQuery, nows: b.nows,
		lookups: lookups, lookedUp: b.lookedUp, meshRefusal: b.meshRefusal}
	c.markLoose()
	return c, nil
}

// Step feeds one epoch's deltas of the scanned relations (by plan.Scan
// Relation name; a missing entry is an empty delta) through the circuit,
// reading and writing operator state in st, and returns the consolidated
// output delta. On error the caller discards st's writes. When ctx ends
// the step stops soon after, between operators or inside a long loop of
// one, and returns ctx.Err() unwrapped. The first Step
// after Build must run even with no input, so that an aggregate without
// GROUP BY emits its one row.
//
// The deltas are not modified; they need not be consolidated.
func (c *Circuit) Step(ctx context.Context, st state.Store, deltas map[string]zset.Batch) (zset.Batch, error) {
	in := make(map[string]zset.Batch, len(c.relations))
	for _, rel := range c.relations {
		d, err := c.inputOf(rel, deltas[rel])
		if err != nil {
			return nil, err
		}
		in[rel] = d
	}
	return c.stepWorker(ctx, st, in, nil, 0, 0)
}

// consolidated returns a consolidated copy of b, leaving b as it was.
func consolidated(b zset.Batch) (zset.Batch, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return zset.Consolidate(append(zset.Batch(nil), b...))
}

// Relations returns the names of the relations the circuit scans, each
// once, in the order the plan first reads them.
func (c *Circuit) Relations() []string { return append([]string(nil), c.relations...) }

// SoleRelation returns the one relation the circuit reads, and false
// when it reads none or several.
func (c *Circuit) SoleRelation() (string, bool) {
	if len(c.relations) != 1 {
		return "", false
	}
	return c.relations[0], true
}

// Explain renders the circuit as an indented tree, one operator per line,
// with its kind, its key and the kind of state it keeps, for
// EXPLAIN INCREMENTAL.
func (c *Circuit) Explain() string { return c.ExplainWith(nil) }

// ExplainWith is Explain with note(id), when not empty, appended to the
// first line of each operator (id is its operator id, as OperatorOf
// returns it).
func (c *Circuit) ExplainWith(note func(id int) string) string {
	var sb strings.Builder
	var walk func(i, depth int)
	walk = func(i, depth int) {
		n := &c.nodes[i]
		for k, line := range strings.Split(n.explain, "\n") {
			sb.WriteString(strings.Repeat("  ", depth))
			sb.WriteString(line)
			if k == 0 && note != nil {
				if s := note(i); s != "" {
					sb.WriteString("  ")
					sb.WriteString(s)
				}
			}
			sb.WriteByte('\n')
		}
		for k, j := range n.inputs {
			d := depth + 1
			if k < len(n.labels) {
				sb.WriteString(strings.Repeat("  ", d))
				sb.WriteString(n.labels[k])
				sb.WriteByte('\n')
				d++
			}
			if k < len(n.routes) && n.routes[k].kind != routeLocal {
				explainRoute(&sb, n.routes[k], d)
				d++
			}
			walk(j, d)
		}
	}
	walk(c.root, 0)
	return sb.String()
}
