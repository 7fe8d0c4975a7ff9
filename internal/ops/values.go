package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Values is a constant relation. Its whole contents are its delta on the
// first step and nothing afterwards; a marker under its prefix records that
// the rows were emitted, so a circuit stepped on a fresh store (a batch
// evaluation) emits them again.
type Values struct {
	prefix []byte
	rows   [][]plan.Expr
}

// NewValues returns the source for rows (constant expressions), keeping its
// marker under prefix.
func NewValues(prefix Prefix, rows [][]plan.Expr) *Values {
	return &Values{prefix: prefix.fixed(), rows: rows}
}

// Step implements Operator; it has no inputs.
func (v *Values) Step(ctx context.Context, st state.Store, _ []zset.Batch) (zset.Batch, error) {
	_, done, err := st.Get(v.prefix)
	if err != nil || done {
		return nil, err
	}
	out := make(zset.Batch, 0, len(v.rows))
	for _, exprs := range v.rows {
		row := make(zset.Row, len(exprs))
		for i, x := range exprs {
			val, err := x.Eval(nil)
			if err != nil {
				return nil, err
			}
			row[i] = val
		}
		out = append(out, zset.Entry{Row: row, Weight: 1})
	}
	if err := st.Set(v.prefix, []byte{1}); err != nil {
		return nil, err
	}
	return zset.Consolidate(out)
}
