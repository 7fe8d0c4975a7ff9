package storage

import (
	"encoding/binary"
	"errors"
	"io"
	"math"

	"github.com/cockroachdb/pebble/v2"
)

// MergerName is the name of the merge operator every RockStream database
// is created with. Pebble records it on disk and refuses to open a
// database with another name, so it never changes; a different merge
// would need a new name and a migration.
const MergerName = "rockstream.weight.v1"

// The weight merge: a value, and a merge operand, is a signed varint
// weight followed by a payload (for stored rows, the row). Merging sums
// the weights and keeps the payload of the newest operand, so that
// Merge(key, weight|row) adds weight to a stored row without reading it.
// A sum of zero stays stored as a zero weight: a merge result is never
// turned into a deletion, because Pebble's compactions can drop a
// deleted merge result without hiding older versions of the key beneath
// it. Readers treat a zero weight as absent, and writers that read one
// delete it.
var weightMerger = &pebble.Merger{
	Name: MergerName,
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		m := &weightMerge{}
		if err := m.add(value, true); err != nil {
			return nil, err
		}
		return m, nil
	},
}

var errWeightOverflow = errors.New("storage: merged weight overflows int64")

// weightMerge accumulates merge operands for one key.
type weightMerge struct {
	sum     int64
	payload []byte // a copy of the newest operand's payload
}

func (m *weightMerge) add(value []byte, newest bool) error {
	w, n := binary.Varint(value)
	if n <= 0 {
		return errors.New("storage: merge operand does not start with a varint weight")
	}
	if (w > 0 && m.sum > math.MaxInt64-w) || (w < 0 && m.sum < math.MinInt64-w) {
		return errWeightOverflow
	}
	m.sum += w
	if newest {
		m.payload = append(m.payload[:0], value[n:]...)
	}
	return nil
}

// MergeNewer implements pebble.ValueMerger.
func (m *weightMerge) MergeNewer(value []byte) error { return m.add(value, true) }

// MergeOlder implements pebble.ValueMerger.
func (m *weightMerge) MergeOlder(value []byte) error { return m.add(value, false) }

// Finish implements pebble.ValueMerger.
func (m *weightMerge) Finish(includesBase bool) ([]byte, io.Closer, error) {
	out := binary.AppendVarint(make([]byte, 0, binary.MaxVarintLen64+len(m.payload)), m.sum)
	return append(out, m.payload...), nil, nil
}
