package ops

import (
	"context"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TimeWindow is TUMBLE and HOP: a flat map that appends window_start and
// window_end to each row, once per window containing the row's time
// column. Windows are aligned to the Unix epoch: window starts are the
// multiples of slide (in microseconds since 1970-01-01 00:00:00, for
// timestamptz in UTC) and each window covers [start, start+size). With
// slide == size (TUMBLE) a row is in exactly one window; otherwise (HOP,
// size a multiple of slide) in size/slide windows, newest first. A row
// whose time is NULL or ±infinity is in no window.
//
// It is linear and keeps no state: Δout = TimeWindow(Δin).
type TimeWindow struct {
	timeCol     int
	slide, size int64
	plus        *types.Operator // timestamp[tz] + interval, with range checks
	rows        rowAlloc
}

// NewTimeWindow returns a TimeWindow over rows whose column timeCol has
// type t (timestamp or timestamptz). size must be a positive multiple of
// slide.
func NewTimeWindow(timeCol int, t types.Type, slide, size int64) (*TimeWindow, error) {
	if slide <= 0 || size <= 0 || size%slide != 0 {
		return nil, errs.New(errs.Internal, "time window size must be a positive multiple of its slide")
	}
	if t.ID != types.Timestamp && t.ID != types.TimestampTZ {
		return nil, errs.Newf(errs.Internal, "time window over a column of type %s", t)
	}
	plus, err := types.ResolveBinary("+", types.Of(t.ID), types.Of(types.Interval))
	if err != nil {
		return nil, err
	}
	return &TimeWindow{timeCol: timeCol, slide: slide, size: size, plus: plus}, nil
}

// Step implements Operator.
func (w *TimeWindow) Step(ctx context.Context, _ state.Store, in []zset.Batch) (zset.Batch, error) {
	w.rows.bind(ctx)
	if len(in[0]) == 0 {
		return nil, nil
	}
	n := w.size / w.slide
	out := make(zset.Batch, 0, len(in[0])*int(n))
	for _, e := range in[0] {
		ts := e.Row[w.timeCol]
		if ts.IsNull() || ts.Micros() == types.TimestampNegInfinity || ts.Micros() == types.TimestampPosInfinity {
			continue
		}
		last := floorDiv(ts.Micros(), w.slide) * w.slide
		for k := int64(0); k < n; k++ {
			start, err := w.plus.Eval(ts, micros(last-ts.Micros()-k*w.slide))
			if err != nil {
				return nil, err
			}
			end, err := w.plus.Eval(start, micros(w.size))
			if err != nil {
				return nil, err
			}
			width := len(e.Row)
			row := w.rows.alloc(width + 2)
			copy(row, e.Row)
			row[width], row[width+1] = start, end
			out = append(out, zset.Entry{Row: row, Weight: e.Weight})
		}
	}
	return zset.Consolidate(out)
}

func micros(us int64) types.Value {
	return types.MakeInterval(types.IntervalValue{Micros: us})
}

// floorDiv is a / b rounded toward negative infinity, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
