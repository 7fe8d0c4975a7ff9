package runtime

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Change is one row of a view's change log: at Epoch, Row's count in the
// view changed by Weight.
type Change struct {
	Epoch  uint64
	Row    zset.Row
	Weight int64
}

// readChanges returns the change-log entries of object id with epoch in
// (after, upTo], in epoch order: each bucket's entries of those epochs,
// decoded from its records and merged by (epoch, seq). Read through currentReader, it visits only the
// buckets the change-log index shows entries after `after` in
// (changeindex.go); otherwise every bucket.
func readChanges(r state.Reader, id, after, upTo uint64) ([]Change, error) {
	if cr, ok := r.(currentReader); ok {
		ent, err := cr.eng.logs.lookup(cr.Reader, id)
		if err != nil {
			return nil, err
		}
		return scanChanges(cr.Reader, id, after, upTo, ent.after(after))
	}
	return scanChanges(r, id, after, upTo, everyBucket)
}

// scanChanges is readChanges over the given buckets, in order.
func scanChanges(r state.Reader, id, after, upTo uint64, buckets []int) ([]Change, error) {
	prefix := relPrefix(nsChangeLog, id)
	type logged struct {
		seq uint64
		Change
	}
	var out []logged
	var derr error
	var lo, hi []byte
	for _, b := range buckets {
		lo = binary.BigEndian.AppendUint64(append(append(lo[:0], prefix...), byte(b)), after+1)
		hi = binary.BigEndian.AppendUint64(append(append(hi[:0], prefix...), byte(b)), upTo+1)
		err := r.Scan(lo, hi, func(k, v []byte) bool {
			if len(k) != len(prefix)+17 {
				derr = errs.Newf(errs.DataCorrupted, "change-log key %x is %d bytes, want %d; the store is damaged: restore it from a checkpoint", k, len(k), len(prefix)+17)
				return false
			}
			at := k[len(prefix)+1:]
			epoch := binary.BigEndian.Uint64(at)
			if err := decodeLogRecord(v, binary.BigEndian.Uint64(at[8:]), func(seq uint64, e zset.Entry) {
				out = append(out, logged{seq: seq, Change: Change{Epoch: epoch, Row: e.Row, Weight: e.Weight}})
			}); err != nil {
				derr = fmt.Errorf("change-log key %x: %w", k, err)
				return false
			}
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b logged) int {
		if c := cmp.Compare(a.Epoch, b.Epoch); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	changes := make([]Change, len(out))
	for i := range out {
		changes[i] = out[i].Change
	}
	return changes, nil
}

// everyBucket lists every bucket, in order.
var everyBucket = func() []int {
	out := make([]int, zset.Buckets)
	for b := range out {
		out[b] = b
	}
	return out
}()

// asOfNow, as the epoch of a read, reads current contents. (Epoch 0 is
// the empty state before the first commit.)
const asOfNow = ^uint64(0)

// relationAt returns a relation's contents as of epoch asOf (asOfNow:
// now): a view's current contents minus the changes logged after asOf.
// A materialized view has no contents before the epoch that created it:
// reading it at an earlier epoch fails with 22023.
func relationAt(ctx context.Context, r state.Reader, o *object, asOf uint64) (zset.Batch, error) {
	if o.system != nil {
		return systemRows(r, o, asOf)
	}
	if asOf != asOfNow {
		if o.kind != sql.MaterializedView {
			return nil, errs.Newf(errs.FeatureNotSupported, "AS OF EPOCH reads materialized views only; %s %q keeps no history", o.kindName(), o.name)
		}
		if err := o.existedAt(asOf); err != nil {
			return nil, err
		}
	}
	cur, err := readContents(ctx, r, o)
	if err != nil || asOf == asOfNow {
		return cur, err
	}
	later, err := readChanges(r, o.id, asOf, ^uint64(0)-1)
	if err != nil {
		return nil, err
	}
	for _, c := range later {
		cur = append(cur, zset.Entry{Row: c.Row, Weight: -c.Weight})
	}
	return zset.Consolidate(cur)
}

// checkAsOf fails unless epoch is within the change-log horizon.
func (e *Engine) checkAsOf(epoch, frontier uint64) error {
	if e.shard != nil {
		// A shard keeps its buckets' change log, not the view's.
		return unsupportedInShard("reading a view's history (AS OF EPOCH, SUBSCRIBE)")
	}
	if epoch > frontier {
		return errs.Newf(errs.InvalidParameterValue, "epoch %d is not committed yet; the frontier is %d", epoch, frontier)
	}
	if oldest := e.oldestRetained(frontier); epoch < oldest {
		return errs.Newf(errs.InvalidParameterValue, "epoch %d is older than the change-log horizon (oldest readable epoch is %d)", epoch, oldest)
	}
	return nil
}

// execSelectAsOf answers a SELECT over materialized views as they were at
// an epoch.
func (s *Session) execSelectAsOf(ctx context.Context, query string, epoch uint64, paramText []*string) (*Result, error) {
	tree, err := pgparse.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, errs.New(errs.SyntaxError, "AS OF EPOCH follows one SELECT")
	}
	if s.txn.wrote() {
		return nil, errs.New(errs.FeatureNotSupported, "AS OF EPOCH is not available in a transaction that has written")
	}
	s.eng.mu.RLock()
	defer s.eng.mu.RUnlock()
	if err := s.eng.checkAsOf(epoch, s.eng.mu.epoch); err != nil {
		return nil, err
	}
	cat := s.eng.mu.cat
	b := newBinder(cat, paramText, s.params())
	p, err := b.Query(tree.Stmts[0].Stmt)
	if err != nil {
		return nil, err
	}
	if err := bindParams(b, paramText); err != nil {
		return nil, err
	}
	rows, err := runQueryAt(ctx, currentReader{s.eng.mu.store, s.eng}, cat, p, epoch)
	if err != nil {
		return nil, err
	}
	return &Result{Columns: outColumns(p.Columns()), Rows: rows, Tag: fmt.Sprintf("SELECT %d", len(rows))}, nil
}

// Changes returns the changes of materialized view name committed after
// epoch after, in epoch order, and the frontier they run up to. It fails
// when after is older than the change-log horizon.
func (e *Engine) Changes(name string, after uint64) ([]Change, uint64, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	o := e.mu.cat.lookup(name)
	if o == nil || o.kind != sql.MaterializedView {
		return nil, 0, errs.Newf(errs.UndefinedTable, "materialized view %q does not exist", name)
	}
	frontier := e.mu.epoch
	if after < frontier {
		if err := e.checkAsOf(after, frontier); err != nil {
			return nil, 0, err
		}
	}
	ch, err := readChanges(currentReader{e.mu.store, e}, o.id, after, frontier)
	return ch, frontier, err
}

// existedAt fails with 22023 when materialized view o did not exist at
// epoch asOf: before the epoch that created it, and at epoch 0, before
// anything.
func (o *object) existedAt(asOf uint64) error {
	if asOf >= o.created && asOf > 0 {
		return nil
	}
	when := ""
	if o.created > 0 {
		when = fmt.Sprintf(" (it was created at epoch %d)", o.created)
	}
	return errs.Newf(errs.InvalidParameterValue, "materialized view %q did not exist at epoch %d%s", o.name, asOf, when)
}
