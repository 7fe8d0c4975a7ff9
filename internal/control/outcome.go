package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rockstream/rockstream/internal/cluster"
)

// The outcome of a write whose acknowledgement did not come.
//
// A write is committed when it is in the input log entry of an epoch at
// or below the commit frontier; the entry, once written, is final. It is
// certainly never committed when, besides being in none of those entries,
// no entry can take it any more. That rests on three rules the hosts keep:
//
//   - a write is taken by one term only (CoordinatorHost.Submit hands it
//     to the machine of the current term; Deliver drops writes), and a
//     machine seals only the writes it took, so only the term named by
//     the receipt can put it in an entry, in an epoch above the receipt's
//     After;
//   - a term that has ended (its election key is gone) reads nothing more
//     from etcd and commits nothing (every read and write is conditioned
//     on its key), so it knows no frontier above the committed epoch X of
//     any reading taken after it ended, and the only epochs it can still
//     seal are at or below X+1;
//   - entries are written only if absent: once the entry of X+1 exists,
//     it is final.
//
// So if the term has ended by a reading with frontier X, and the write is
// in no entry from After+1 to X+1 while the entry of X+1 exists, it is
// never committed. When no coordinator has sealed X+1 yet, WriteOutcome
// closes it with an empty entry: a coordinator adopts an entry it finds
// for its epoch as it adopts one a crashed incarnation left, and seals
// its own writes in the next. While the term still leads the outcome is
// unknown: the write may be pending in its machine or lost with a round
// the machine dropped, and only the term's end settles which.

// Outcome is what WriteOutcome learned of one write.
type Outcome struct {
	ID uint64 `json:"id"`
	// State is "committed", "not_committed" (certainly never: see above)
	// or "unknown".
	State string `json:"state"`
	// Epoch is the epoch the write is committed in (or sealed in, when
	// unknown because that epoch is not committed yet).
	Epoch cluster.Epoch `json:"epoch,omitempty"`
	// Frontier is the commit frontier of the reading the answer rests on.
	Frontier cluster.Epoch `json:"frontier"`
	// Reason says why the answer is what it is.
	Reason string `json:"reason"`
}

// MaxOutcomeScan bounds the input log entries one WriteOutcome reads:
// past it the outcome is unknown.
const MaxOutcomeScan = 10000

// ErrBadReceipt is WriteOutcome's error for a receipt no submission can
// have returned.
var ErrBadReceipt = errors.New("control: not a receipt of this cluster")

// WriteOutcome finds whether the write id, submitted with receipt r, is
// committed, and whether it can still be.
func WriteOutcome(ctx context.Context, store *Store, objects Objects, id uint64, r Receipt) (Outcome, error) {
	out := Outcome{ID: id, State: "unknown"}
	x, termLive, err := store.readTerm(ctx, r.Term)
	if err != nil {
		return out, err
	}
	out.Frontier = x
	switch {
	case r.Term <= 0:
		return out, fmt.Errorf("%w: term %d", ErrBadReceipt, r.Term)
	case r.After > x:
		return out, fmt.Errorf("%w: after_epoch %d is past the frontier %d", ErrBadReceipt, r.After, x)
	case x-r.After > MaxOutcomeScan:
		out.Reason = fmt.Sprintf("%d epochs were committed since it was submitted; at most %d are searched", x-r.After, MaxOutcomeScan)
		return out, nil
	}
	for e := r.After + 1; e <= x; e++ {
		writes, found, err := readEntry(ctx, objects, e)
		if err != nil {
			return out, err
		}
		if !found {
			return out, fmt.Errorf("control: the input log has no entry for epoch %d, which is committed", e)
		}
		if holds(writes, id) {
			out.State, out.Epoch = "committed", e
			out.Reason = fmt.Sprintf("the input log entry of epoch %d holds it, and epoch %d is committed", e, e)
			return out, nil
		}
	}
	if termLive {
		out.Reason = fmt.Sprintf("it is in no committed epoch yet, and term %d, which took it, still leads: it may yet commit", r.Term)
		return out, nil
	}
	next := x + 1
	stored, _, err := objects.PutIfAbsent(ctx, cluster.InputKey(next), []byte("[]"))
	if err != nil {
		return out, fmt.Errorf("control: close epoch %d: %w", next, err)
	}
	var writes []cluster.Write
	if err := json.Unmarshal(stored, &writes); err != nil {
		return out, fmt.Errorf("control: input log entry %d: %w", next, err)
	}
	if holds(writes, id) {
		out.Epoch = next
		out.Reason = fmt.Sprintf("it is sealed in epoch %d, which is not committed yet; it commits with that epoch", next)
		return out, nil
	}
	out.State = "not_committed"
	out.Reason = fmt.Sprintf("term %d, which took it, has ended; it is in no input log entry from epoch %d to %d, and that term can seal no later epoch", r.Term, r.After+1, next)
	return out, nil
}

// readTerm reads the commit frontier and whether the election key of
// term (its create revision) still exists, in one transaction.
func (s *Store) readTerm(ctx context.Context, term int64) (cluster.Epoch, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.keys.Committed()),
		clientv3.OpGet(s.keys.Election()+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return 0, false, fmt.Errorf("control: read the frontier and the election: %w", err)
	}
	var x cluster.Epoch
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		if x, err = decodeEpoch(s.keys.Committed(), kvs[0].Value); err != nil {
			return 0, false, err
		}
	}
	live := false
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		live = live || kv.CreateRevision == term
	}
	return x, live, nil
}

// readEntry reads the input log entry of e; found is false when there is
// none.
func readEntry(ctx context.Context, objects Objects, e cluster.Epoch) ([]cluster.Write, bool, error) {
	data, err := objects.Get(ctx, cluster.InputKey(e))
	if isNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("control: read input log entry %d: %w", e, err)
	}
	var writes []cluster.Write
	if err := json.Unmarshal(data, &writes); err != nil {
		return nil, false, fmt.Errorf("control: input log entry %d: %w", e, err)
	}
	return writes, true, nil
}

func holds(writes []cluster.Write, id uint64) bool {
	for _, w := range writes {
		if w.ID == id {
			return true
		}
	}
	return false
}
