package cluster

import (
	"fmt"
	"sort"
	"strings"
)

// NumBuckets is how many buckets the key space is hashed into; the
// coordinator places each bucket on exactly one worker per assignment.
const NumBuckets = 256

// Epoch numbers the cluster's commits; epoch 0 is the empty state.
type Epoch uint64

// Revision is the etcd modification revision of a bucket assignment. It is
// the fencing token: every message of the protocol carries the revision it
// was sent under, and a worker refuses any message older than its own.
type Revision int64

// NodeID names a node of the cluster ("coord", "w1", ...).
type NodeID string

// LeaseID identifies one registration of a worker: the etcd lease its
// membership key is bound to. A worker that restarts or fences itself
// registers again under a new lease and is a new member.
type LeaseID int64

// Coordinator is the node ID of the coordinator; Client is the node ID
// under which DML arrives and acknowledgements leave.
const (
	CoordinatorID NodeID = "coord"
	ClientID      NodeID = "client"
)

// Write is one acknowledged-or-not DML change: Delta is added to the sum
// kept under Key. ID is unique per write.
type Write struct {
	ID    uint64
	Key   string
	Delta int64
}

// BucketOf is the bucket a key hashes to.
func BucketOf(key string) int {
	// FNV-1a, 32 bits.
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % NumBuckets)
}

// Assignment places every bucket on one member. Members are the
// registrations the placement was computed from: a worker serves an
// assignment only if it names the worker's current lease.
type Assignment struct {
	Owner   [NumBuckets]NodeID
	Members map[NodeID]LeaseID
}

// Place computes a balanced assignment over members: contiguous bucket
// ranges, in the order of the members' IDs, whose sizes differ by at most
// one. It is deterministic in members alone.
func Place(members map[NodeID]LeaseID) Assignment {
	ids := SortedIDs(members)
	a := Assignment{Members: make(map[NodeID]LeaseID, len(members))}
	for id, l := range members {
		a.Members[id] = l
	}
	if len(ids) == 0 {
		return a
	}
	for b := 0; b < NumBuckets; b++ {
		a.Owner[b] = ids[b*len(ids)/NumBuckets]
	}
	return a
}

// Owned reports which buckets the assignment places on id.
func (a *Assignment) Owned(id NodeID) [NumBuckets]bool {
	var owned [NumBuckets]bool
	for b, o := range a.Owner {
		owned[b] = o == id
	}
	return owned
}

// String shows the assignment as bucket ranges per owner:
// "w1:0-127 w2:128-255".
func (a *Assignment) String() string {
	var parts []string
	start := 0
	for b := 1; b <= NumBuckets; b++ {
		if b == NumBuckets || a.Owner[b] != a.Owner[start] {
			if a.Owner[start] != "" {
				parts = append(parts, fmt.Sprintf("%s:%d-%d", a.Owner[start], start, b-1))
			}
			start = b
		}
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, " ")
}

// SameMembers reports whether two membership readings name the same
// registrations.
func SameMembers(a, b map[NodeID]LeaseID) bool {
	if len(a) != len(b) {
		return false
	}
	for id, l := range a {
		if b[id] != l {
			return false
		}
	}
	return true
}

// SortedIDs returns the keys of m in order, so that every loop over a
// membership is deterministic.
func SortedIDs[V any](m map[NodeID]V) []NodeID {
	ids := make([]NodeID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Batch is a keyed sum delta: what one epoch adds to each key's sum.
type Batch map[string]int64

// Evaluate folds writes into a batch, keeping only keys whose bucket keep
// accepts (nil keeps all). Keys whose sum is zero are dropped, so equal
// states compare equal.
func Evaluate(into Batch, writes []Write, keep *[NumBuckets]bool) {
	for _, w := range writes {
		if keep != nil && !keep[BucketOf(w.Key)] {
			continue
		}
		into[w.Key] += w.Delta
		if into[w.Key] == 0 {
			delete(into, w.Key)
		}
	}
}

// Merge adds delta into state, dropping keys that reach zero.
func Merge(state, delta Batch) {
	for k, d := range delta {
		state[k] += d
		if state[k] == 0 {
			delete(state, k)
		}
	}
}
