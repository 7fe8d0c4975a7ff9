package diff

import (
	"fmt"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

func (b *builder) timeWindow(n *plan.TimeWindow) (int, error) {
	in, err := b.build(n.Input)
	if err != nil {
		return 0, err
	}
	cols := n.Input.Columns()
	op, err := ops.NewTimeWindow(n.TimeCol, cols[n.TimeCol].Type, n.Slide, n.Size)
	if err != nil {
		return 0, err
	}
	explain := fmt.Sprintf("tumble  time=%s  size=%s  state=none", cols[n.TimeCol].Name, intervalText(n.Size))
	if n.Func == "hop" {
		explain = fmt.Sprintf("hop  time=%s  slide=%s  size=%s  state=none",
			cols[n.TimeCol].Name, intervalText(n.Slide), intervalText(n.Size))
	}
	return b.add(node{op: op, inputs: []int{in}, explain: explain}), nil
}

func intervalText(us int64) string {
	return string(types.AppendInterval(nil, types.IntervalValue{Micros: us}))
}

// windowedAggregate returns agg wrapped so that a watermark can release
// the state of closed windows, when its groups are event-time windows: a
// group key is a window_start or window_end of a TUMBLE or HOP whose time
// column and input rows come from one stored relation through filters and
// projections only. Then every change to a window's group comes from a row
// of that relation whose time lies in the window, and once the relation's
// watermark passes the window's end no such row can be inserted, updated
// or deleted any more (the runtime enforces it). It returns nil when the
// aggregate is not of that shape, along with the EXPLAIN note otherwise.
func windowedAggregate(n *plan.Aggregate, agg *ops.Aggregate, prefix ops.Prefix) (*ops.WindowedAggregate, string, error) {
	for g, e := range n.GroupBy {
		c, ok := e.(*plan.ColRef)
		if !ok {
			continue
		}
		src, idx := traceColumn(n.Input, c.Index)
		tw, ok := src.(*plan.TimeWindow)
		if !ok {
			continue
		}
		width := len(tw.Input.Columns())
		if idx != width && idx != width+1 {
			continue
		}
		rel, col := traceColumn(tw.Input, tw.TimeCol)
		scan, ok := rel.(*plan.Scan)
		if !ok {
			continue
		}
		w, err := ops.NewWindowedAggregate(prefix, agg, scan.Relation, col, g, idx == width, tw.Size)
		if err != nil {
			return nil, "", err
		}
		note := fmt.Sprintf("  windows=closed once window_end ≤ watermark(%s.%s), index(window_end, group)",
			scan.Relation, scan.Cols[col].Name)
		return w, note, nil
	}
	return nil, "", nil
}

// traceColumn follows column idx of p down through filters and
// projections that pass it through unchanged, and returns the node and
// column it comes from.
func traceColumn(p plan.Node, idx int) (plan.Node, int) {
	for {
		switch n := p.(type) {
		case *plan.Filter:
			p = n.Input
		case *plan.Project:
			c, ok := n.Exprs[idx].(*plan.ColRef)
			if !ok {
				return p, idx
			}
			p, idx = n.Input, c.Index
		default:
			return p, idx
		}
	}
}

// ReleaseClosedWindows releases, in every windowed aggregate of the
// circuit whose windows come from column column of relation relation, the
// state of the windows that ended at or before watermark. The caller
// guarantees that no row of the relation with a time before watermark will
// be inserted, updated or deleted again. The circuit's output does not
// change.
func (c *Circuit) ReleaseClosedWindows(st state.Store, relation string, column int, watermark types.Value) error {
	for i := range c.nodes {
		if r, ok := c.nodes[i].op.(ops.WindowReleaser); ok {
			if err := r.ReleaseClosed(st, relation, column, watermark); err != nil {
				return err
			}
		}
	}
	return nil
}
