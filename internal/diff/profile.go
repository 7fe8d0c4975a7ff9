package diff

import (
	"context"
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// What a circuit's operators hold and do, for EXPLAIN INCREMENTAL
// ESTIMATE: the state key of every operator says which operator wrote it
// (ops.Prefix: Circuit | bucket | operator id, 4 bytes, | ...), and a
// profiled step counts the rows each operator outputs.

// OperatorCount returns the number of operators of the circuit; ids run from
// 0 to OperatorCount()-1 (Operators describes each).
func (c *Circuit) OperatorCount() int { return len(c.nodes) }

// ScanOf returns the relation operator id reads, and false when it is not
// a scan (a scan keeps no state; its output is the relation's delta).
func (c *Circuit) ScanOf(id int) (string, bool) { return c.nodes[id].rel, c.nodes[id].op == nil }

// OperatorOf returns the id of the operator of a top-level circuit whose
// state holds key, a key written under prefix (the prefix Build was
// given), and false for a key that is not an operator's state.
func OperatorOf(prefix, key []byte) (int, bool) {
	n := len(prefix)
	if len(key) < n+5 || string(key[:n]) != string(prefix) {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(key[n+1 : n+5])), true
}

// StepProfiled is Step that also returns, by operator id, how many rows
// (entries of its output delta) each operator produced. It is for
// estimates over samples, not for maintaining views: it runs on one
// worker.
func (c *Circuit) StepProfiled(ctx context.Context, st state.Store, deltas map[string]zset.Batch) (zset.Batch, []int64, error) {
	c.profile = make([]int64, len(c.nodes))
	defer func() { c.profile = nil }()
	out, err := c.Step(ctx, st, deltas)
	return out, c.profile, err
}
