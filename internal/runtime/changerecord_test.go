package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestLogRecordsHoldTheDeltas logs deltas of several epochs (two deltas
// in one of them, one large enough to split a bucket's entries into
// several records) on 1, 2 and 3 workers, and checks that the stores
// written are the same, that reading the log back gives every delta's
// entries in their order, that each record holds entries of its own
// bucket only, and that a bucket's entries of a delta are one record
// unless it passes maxLogRecord. Each worker count logs the deltas as
// rows and as entries already encoded (encodeDelta), with the same bytes.
func TestLogRecordsHoldTheDeltas(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	delta := func(n, pad int) zset.Batch {
		out := make(zset.Batch, n)
		for i := range out {
			w := int64(1 + rng.IntN(3))
			if rng.IntN(4) == 0 {
				w = -w
			}
			out[i] = zset.Entry{Weight: w, Row: zset.Row{
				types.MakeInt(types.Int8, rng.Int64N(1_000)),
				types.MakeText(strings.Repeat("x", rng.IntN(pad+1))),
			}}
		}
		return out
	}
	epochs := [][]zset.Batch{{delta(1, 0)}, {delta(300, 10), delta(50, 10)}, {delta(6_000, 8_000)}, {delta(1000, 10)}}
	v := &object{id: 9}
	prefix := relPrefix(nsChangeLog, v.id)
	var dumps []string
	for run := range 6 {
		workers, encoded := 1+run/2, run%2 == 1
		store := state.NewMemory()
		for i, deltas := range epochs {
			ov := state.NewOverlay(store)
			w := &epochWrite{epoch: uint64(i + 1), ov: ov, logSeq: map[uint64]uint64{}}
			for _, d := range deltas {
				var enc *encodedDelta
				if encoded {
					enc = encodeDelta(v, d)
				}
				if err := logChangesOn(ov, w, v, d, enc, workers); err != nil {
					t.Fatal(err)
				}
				enc.release()
			}
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		var sb strings.Builder
		records := map[[2]uint64]int{} // (epoch, bucket): records
		if err := store.Scan(prefix, state.PrefixEnd(prefix), func(k, val []byte) bool {
			fmt.Fprintf(&sb, "%x = %d bytes, sha256 %x\n", k, len(val), sha256.Sum256(val))
			b := int(k[len(prefix)])
			epoch := binary.BigEndian.Uint64(k[len(prefix)+1:])
			records[[2]uint64{epoch, uint64(b)}]++
			if err := decodeLogRecord(val, 0, func(_ uint64, e zset.Entry) {
				if got, _ := v.viewRowBucket(e.Row, nil); got != b {
					t.Fatalf("record %x holds a row of bucket %d", k, got)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if len(val) > 2*maxLogRecord {
				t.Fatalf("record %x is %d bytes", k, len(val))
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, sb.String())
		split := false
		for key, n := range records {
			if n > 1 && key[0] == 3 {
				split = true
			} else if n > 1 && key[0] != 2 {
				t.Fatalf("epoch %d bucket %d: %d records, want one per delta", key[0], key[1], n)
			} else if n > 2 {
				t.Fatalf("epoch 2 bucket %d: %d records, want one per delta", key[1], n)
			}
		}
		if !split {
			t.Fatal("no bucket of the large delta was split into several records")
		}
		changes, err := readChanges(store, v.id, 0, uint64(len(epochs)))
		if err != nil {
			t.Fatal(err)
		}
		var want []Change
		for i, deltas := range epochs {
			for _, d := range deltas {
				for _, e := range d {
					want = append(want, Change{Epoch: uint64(i + 1), Row: e.Row, Weight: e.Weight})
				}
			}
		}
		if got, want := changeSums(changes), changeSums(want); got != want {
			t.Fatalf("%d workers: read back: %s", workers, firstDifference(want, got))
		}
		if changes, err = readChanges(store, v.id, 1, 2); err != nil || len(changes) != 350 {
			t.Fatalf("epoch 2 alone: %d changes, %v", len(changes), err)
		}
	}
	for i := range dumps[1:] {
		if dumps[i+1] != dumps[0] {
			t.Fatalf("the log written by %d workers (encoded: %v) differs from one worker's: %s", 1+(i+1)/2, (i+1)%2 == 1, firstDifference(dumps[0], dumps[i+1]))
		}
	}
}

// TestCorruptLogRecordRefused checks that a record that does not decode
// (as a layout 2 entry read as a record does not) is refused with
// XX001, not misread.
func TestCorruptLogRecordRefused(t *testing.T) {
	entry := encodeStored(nil, 1, zset.Row{types.MakeInt(types.Int4, 5)})
	_, good, err := logRecordOf(entry)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(parts ...uint64) []byte {
		var out []byte
		for i := 0; i+1 < len(parts); i += 2 {
			out = binary.AppendUvarint(out, parts[i])
			out = binary.AppendUvarint(out, parts[i+1])
			out = append(out, entry...)
		}
		return out
	}
	n := uint64(len(entry))
	if err := decodeLogRecord(good, 10, func(seq uint64, e zset.Entry) {
		if seq != 10 || e.Weight != 1 {
			t.Fatalf("decoded seq %d weight %d", seq, e.Weight)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := decodeLogRecord(rec(0, n, 3, n), 0, func(uint64, zset.Entry) {}); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string][]byte{
		"empty":                {},
		"a layout 2 entry":     entry,
		"first offset not 0":   rec(1, n),
		"offsets not rising":   rec(0, n, 0, n),
		"length past the end":  rec(0, n+1),
		"truncated":            good[:len(good)-1],
		"trailing byte":        append(append([]byte(nil), good...), 0),
		"entry that is no row": {0, 2, 2, 0xff},
	} {
		err := decodeLogRecord(v, 0, func(uint64, zset.Entry) {})
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		if c := errs.CodeOf(err); c != errs.DataCorrupted {
			t.Errorf("%s: %v (%s), want XX001", name, err, c)
		}
	}
}

// changeSums is changesText with each row's encoding as its length and
// hash.
func changeSums(cs []Change) string {
	var sb strings.Builder
	for _, c := range cs {
		row := zset.EncodeRow(nil, c.Row)
		fmt.Fprintf(&sb, "%d %d %d %x\n", c.Epoch, c.Weight, len(row), sha256.Sum256(row))
	}
	return sb.String()
}
