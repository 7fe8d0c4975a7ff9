// Package diff is the differentiation pass: it turns a logical plan into an
// incremental circuit of operators by the DBSP rules of IVM.md.
package diff

import (
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Circuit is the incremental form of one query. Its operators keep their
// state in the store passed to Step, under the key prefix given to Build.
type Circuit struct {
	// fields are the differentiation work's
}

// Build differentiates p. Every key the circuit's operators write starts
// with prefix. Constructs outside the supported set fail with 0A000 naming
// the construct. Sort and Limit are accepted only at the top of p and only
// when forQuery is true (ad-hoc SELECT); the caller applies them.
func Build(p plan.Node, prefix []byte, forQuery bool) (*Circuit, error) {
	panic("not yet implemented")
}

// Step feeds one epoch's deltas of the scanned relations (by plan.Scan
// Relation name; a missing entry is an empty delta) through the circuit,
// reading and writing operator state in st, and returns the consolidated
// output delta. On error the caller discards st's writes. The first Step
// after Build must run even with no input, so that an aggregate without
// GROUP BY emits its one row.
func (c *Circuit) Step(st state.Store, deltas map[string]zset.Batch) (zset.Batch, error) {
	panic("not yet implemented")
}

// Relations returns the names of the relations the circuit scans.
func (c *Circuit) Relations() []string { panic("not yet implemented") }

// Explain renders the circuit as an indented tree, one operator per line,
// with its kind, its key and the kind of state it keeps, for
// EXPLAIN INCREMENTAL.
func (c *Circuit) Explain() string { panic("not yet implemented") }
