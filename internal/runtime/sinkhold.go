package runtime

import (
	"context"
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/state"
)

// A sink holds back the trimming of its view's change log: the log keeps
// every change after the epoch the sink last reported delivered
// (SinkDelivered), or after the sink's creation until it reports, however
// old, so that a sink that was paused or failing for longer than the
// retention horizon still resumes without a gap. The reported epoch is a
// lower bound of what the sink has delivered (the external system holds
// the exact position), kept under the sink's progress key and forgotten
// with the sink by DROP SINK.

// SinkDelivered records that sink has delivered every change of its view
// up to epoch, releasing the older part of the view's change log. It
// commits an epoch; an epoch lower than the one recorded, or a sink that
// no longer exists, changes nothing.
func (e *Engine) SinkDelivered(ctx context.Context, sink string, epoch uint64) error {
	return e.submit(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		sp := w.cat.connectors[sink]
		if sp == nil || !sp.Sink {
			return nil, nil
		}
		if held, err := sinkHeld(st, sp.Name, sp.Created); err != nil || held >= epoch {
			return nil, err
		}
		return nil, st.Set(progressKey(sink), binary.BigEndian.AppendUint64(nil, epoch))
	})
}

// sinkHeld returns the epoch after which sink needs its view's changes.
func sinkHeld(st state.Reader, sink string, created uint64) (uint64, error) {
	v, ok, err := st.Get(progressKey(sink))
	if err != nil || !ok || len(v) != 8 {
		return created, err
	}
	return binary.BigEndian.Uint64(v), nil
}

// changeLogHold returns the lowest epoch after which a sink of view needs
// its changes, and whether the view has a sink.
func changeLogHold(st state.Reader, cat *catalog, view string) (uint64, bool, error) {
	var low uint64
	found := false
	for _, sp := range cat.connectors {
		if !sp.Sink || sp.Target != view {
			continue
		}
		held, err := sinkHeld(st, sp.Name, sp.Created)
		if err != nil {
			return 0, false, err
		}
		if !found || held < low {
			low, found = held, true
		}
	}
	return low, found, nil
}
