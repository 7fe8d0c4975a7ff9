package diff

import (
	"strings"
	"sync/atomic"
)

// Operator describes one operator of a circuit for observers (the web
// console): what EXPLAIN INCREMENTAL shows of it, as a graph node.
type Operator struct {
	// ID is the operator's id: its index in the circuit, which is also
	// the 4 bytes after the bucket in the keys of its state (ops.Prefix).
	ID int
	// Kind is the first word of its EXPLAIN line: scan, filter, project,
	// join, aggregate, ...
	Kind string
	// Explain is its EXPLAIN INCREMENTAL text (one line, or more for an
	// operator holding a nested circuit).
	Explain string
	// Relation is the relation a scan reads; empty for other operators.
	Relation string
	// Inputs are the ids of the operators it reads, and Exchanges, one per
	// input, how the input is exchanged between workers ("" when it is
	// not).
	Inputs    []int
	Exchanges []string
	// Rows counts the rows (delta entries) the operator emitted in the
	// steps this circuit ran since it was built, on every worker; steps
	// later rolled back are counted too.
	Rows uint64
	// Root is true for the operator whose output is the circuit's.
	Root bool
}

// Operators returns the circuit's operators in id order, every operator
// after its inputs. It reads only what Build fixed and atomic counters,
// so it may be called while the circuit steps.
func (c *Circuit) Operators() []Operator {
	out := make([]Operator, len(c.nodes))
	for i := range c.nodes {
		n := &c.nodes[i]
		kind, _, _ := strings.Cut(n.explain, " ")
		op := Operator{ID: i, Kind: kind, Explain: n.explain, Relation: n.rel,
			Inputs: append([]int(nil), n.inputs...), Root: i == c.root}
		for k := range n.inputs {
			ex := ""
			if k < len(n.routes) && n.routes[k].kind != routeLocal {
				var sb strings.Builder
				explainRoute(&sb, n.routes[k], 0)
				ex = strings.TrimSpace(sb.String())
			}
			op.Exchanges = append(op.Exchanges, ex)
		}
		if c.emitted != nil {
			op.Rows = c.emitted[i].Load()
		}
		out[i] = op
	}
	return out
}

// countEmitted adds n rows to operator i's count. The worker instances of
// a circuit share the counters of the circuit they were built for.
func (c *Circuit) countEmitted(i, n int) {
	if c.emitted != nil && n > 0 {
		c.emitted[i].Add(uint64(n))
	}
}

// newEmitted returns the row counters of a circuit of n operators.
func newEmitted(n int) []atomic.Uint64 { return make([]atomic.Uint64, n) }
