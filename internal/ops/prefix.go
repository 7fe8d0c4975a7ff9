package ops

import (
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/zset"
)

// Prefix is where an operator keeps its state. Every key the operator
// writes is
//
//	Circuit | bucket | Op | the operator's own bytes
//
// where bucket (one byte) is zset.Bucket of the EncodeKey encoding of the
// operator's routing key: the key the circuit's exchange routes the
// operator's input by (its group, join, partition key or its whole row;
// the empty key for an operator that runs alone). So all the state one
// bucket holds for every operator of a circuit is the key range
// [Circuit | b, Circuit | b+1): the state of the keys a worker owns is
// contiguous, and a bucket's state can be moved on its own. Op is fixed
// width among an operator's siblings, so no operator's keys are a prefix
// of another's within a bucket.
type Prefix struct {
	Circuit []byte
	Op      []byte
}

// With returns p with suffix appended to its operator part.
func (p Prefix) With(suffix ...byte) Prefix {
	return Prefix{Circuit: p.Circuit, Op: withSuffix(p.Op, suffix...)}
}

// fixed returns the prefix of the state of an operator whose only key is
// the empty one (it runs alone): p in the bucket of the empty key.
func (p Prefix) fixed() []byte {
	return append(append(append([]byte(nil), p.Circuit...), byte(zset.Bucket(nil))), p.Op...)
}

// bucketed is a Prefix expanded for every bucket, so that building a key
// allocates nothing: the prefix of bucket b, Circuit | b | Op, is
// buf[b·n:(b+1)·n].
type bucketed struct {
	buf []byte
	n   int
	// byValue: the operator's key is EncodeKey of one int4 value that is
	// itself the bucket (a partial step keyed by RowBucket, which routes
	// by the bucket of the whole row).
	byValue bool
}

// expand returns p's prefix table.
func (p Prefix) expand() *bucketed {
	n := len(p.Circuit) + 1 + len(p.Op)
	t := &bucketed{buf: make([]byte, 0, n*zset.Buckets), n: n}
	for b := range zset.Buckets {
		t.buf = append(append(append(t.buf, p.Circuit...), byte(b)), p.Op...)
	}
	return t
}

// bucketOf returns the bucket of the operator key key (EncodeKey of the
// routing key's values).
func (t *bucketed) bucketOf(key []byte) int {
	if t.byValue && len(key) == 5 {
		// EncodeKey of an int4 ends with its value's low byte, which for a
		// bucket (0 to 255) is the value.
		return int(key[4])
	}
	return zset.Bucket(key)
}

// of returns the prefix of the state of routing key key.
func (t *bucketed) of(key []byte) []byte { return t.at(t.bucketOf(key)) }

// at returns the prefix of bucket b.
func (t *bucketed) at(b int) []byte { return t.buf[b*t.n : (b+1)*t.n : (b+1)*t.n] }

// plen is the length of every prefix of the table.
func (t *bucketed) plen() int { return t.n }

// singleRowBucket reports whether key is the one expression RowBucket,
// whose EncodeKey carries the bucket as its value (bucketed.byValue).
func singleRowBucket(key []plan.Expr) (*rowBucket, bool) {
	if len(key) != 1 {
		return nil, false
	}
	b, ok := key[0].(*rowBucket)
	return b, ok
}
