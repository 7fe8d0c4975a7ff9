package runtime

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// A materialized view's row count (the sum of its stored weights, what
// count(*) over it returns) is kept beside its contents, in the same
// epoch, so that rockstream_catalog.views and the server's metrics read
// it without scanning the view. A store written before the count existed
// has none for its views: the count is then computed by a scan, and
// stored from the view's next change on.

// viewRowsKey is where the row count of the view with id is kept.
func viewRowsKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{nsMeta, 'v', 'r', '/'}, id)
}

// setViewRows stores the row count of a view just created with the
// contents delta.
func setViewRows(st state.Store, id uint64, delta zset.Batch) error {
	var n int64
	for _, e := range delta {
		n += e.Weight
	}
	return st.Set(viewRowsKey(id), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// addViewRows adds a view's delta, already applied to its contents, to
// its row count.
func addViewRows(st state.Store, o *object, delta zset.Batch) error {
	v, ok, err := st.Get(viewRowsKey(o.id))
	if err != nil {
		return err
	}
	if !ok {
		n, err := countViewRows(st, o)
		if err != nil {
			return err
		}
		return st.Set(viewRowsKey(o.id), binary.BigEndian.AppendUint64(nil, uint64(n)))
	}
	if len(v) != 8 {
		return errs.Newf(errs.DataCorrupted, "the row count of %s is %d bytes, want 8; the store is damaged: restore it from a checkpoint", o.name, len(v))
	}
	n := int64(binary.BigEndian.Uint64(v))
	for _, e := range delta {
		n += e.Weight
	}
	return st.Set(viewRowsKey(o.id), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// viewRows returns a materialized view's row count.
func viewRows(r state.Reader, o *object) (int64, error) {
	v, ok, err := r.Get(viewRowsKey(o.id))
	if err != nil {
		return 0, err
	}
	if !ok {
		return countViewRows(r, o)
	}
	if len(v) != 8 {
		return 0, errs.Newf(errs.DataCorrupted, "the row count of %s is %d bytes, want 8; the store is damaged: restore it from a checkpoint", o.name, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// countViewRows sums the weights of a view's stored rows.
func countViewRows(r state.Reader, o *object) (int64, error) {
	prefix := o.rowsPrefix()
	var n int64
	var derr error
	err := r.Scan(prefix, state.PrefixEnd(prefix), func(_, v []byte) bool {
		w, k := binary.Varint(v)
		if k <= 0 {
			derr = errs.New(errs.Internal, "corrupt stored row: bad weight")
			return false
		}
		n += w
		return true
	})
	if err == nil {
		err = derr
	}
	return n, err
}

// lastChange returns the last epoch whose changes to the view with id are
// in its change log, and false when the log holds none (the view has not
// changed within the retention horizon). Read through currentReader, the
// change-log index answers (changeindex.go); otherwise each bucket's last
// entry is read.
func lastChange(r state.Reader, id uint64) (uint64, bool, error) {
	var ent *bucketEpochs
	var err error
	if cr, ok := r.(currentReader); ok {
		ent, err = cr.eng.logs.lookup(cr.Reader, id)
	} else {
		ent, err = scanBucketEpochs(r, id)
	}
	if err != nil {
		return 0, false, err
	}
	epoch, found := ent.last()
	return epoch, found, nil
}
