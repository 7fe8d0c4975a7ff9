package ops

import (
	"bytes"
	"hash/maphash"
)

// keyGrouper puts keyRefs in the order sortKeyRefs gives them (by key,
// ties in batch order) without comparing every pair when many refs share
// a key: each distinct key is found once in a hash map, only the distinct
// keys are sorted, and the refs are placed after them by a counting sort,
// which keeps each key's refs in their batch order. A batch of a million
// rows over ten thousand groups is then a million map lookups and a sort
// of ten thousand keys, where a comparison sort compares about twenty
// million pairs of keys.
//
// When most keys are distinct (a batch grouped by its primary key) the
// map would cost more than it saves: once more than half of the batch's
// refs (or more than maxKeyGroups) have had a key of their own, order
// sorts by comparison instead (having spent at most half a batch of
// lookups). Either way the result is exactly sortKeyRefs's.
//
// The map is keyed by a 64-bit hash of the key, so that finding a key
// allocates nothing; a key whose hash is another key's (checked bytewise)
// makes order sort by comparison too.
//
// A keyGrouper's buffers are reused from call to call; it is not safe for
// concurrent use.
type keyGrouper struct {
	seed   maphash.Seed
	ids    map[uint64]int32
	groups []keyRef // one per distinct key; idx is the key's id
	gid    []int32  // per ref, the id of its key
	at     []int32  // per id, its refs' count, then the next place of one
	out    []keyRef
	// hash, when set, replaces the key hash (tests force collisions).
	hash func([]byte) uint64
}

// maxKeyGroups bounds the map: a batch of more distinct keys is sorted
// by comparison, where the map's memory would cost more than its saving.
// keepKeyGroups is the most entries a map is kept with between calls.
const (
	maxKeyGroups  = 1 << 20
	keepKeyGroups = 1 << 14
)

// keyGroupMin is the batch size under which a comparison sort is used
// directly: a small sort is cheaper than building a map.
const keyGroupMin = 256

// order sorts refs by their keys in keys, ties in batch order, like
// sortKeyRefs. refs must be in ascending idx order (as a batch's refs are
// built), which the counting sort keeps within each key.
func (g *keyGrouper) order(refs []keyRef, keys []byte) {
	if len(refs) < keyGroupMin {
		sortKeyRefs(refs, keys)
		return
	}
	if g.ids == nil {
		g.seed = maphash.MakeSeed()
		g.ids = make(map[uint64]int32)
	} else {
		clear(g.ids)
	}
	// A map grown by one large batch is not kept for the next: clear
	// keeps its buckets.
	defer func() {
		if len(g.ids) > keepKeyGroups {
			g.ids = nil
		}
	}()
	g.groups = g.groups[:0]
	g.gid = resize(g.gid, len(refs))
	g.at = g.at[:0]
	for i, r := range refs {
		k := keys[r.off:r.end]
		var h uint64
		if g.hash != nil {
			h = g.hash(k)
		} else {
			h = maphash.Bytes(g.seed, k)
		}
		id, ok := g.ids[h]
		if ok && !bytes.Equal(k, keys[g.groups[id].off:g.groups[id].end]) {
			sortKeyRefs(refs, keys) // two keys with one hash
			return
		}
		if !ok {
			id = int32(len(g.groups))
			// Mostly distinct keys: hashing them only adds to the sort.
			if int(id)*2 > len(refs) || id >= maxKeyGroups {
				sortKeyRefs(refs, keys)
				return
			}
			g.ids[h] = id
			g.groups = append(g.groups, keyRef{off: r.off, end: r.end, idx: id})
			g.at = append(g.at, 0)
		}
		g.gid[i] = id
		g.at[id]++
	}
	sortKeyRefs(g.groups, keys) // distinct keys: no ties
	next := int32(0)
	for _, grp := range g.groups {
		n := g.at[grp.idx]
		g.at[grp.idx] = next
		next += n
	}
	g.out = resize(g.out, len(refs))
	for i, r := range refs {
		id := g.gid[i]
		g.out[g.at[id]] = r
		g.at[id]++
	}
	copy(refs, g.out)
}
