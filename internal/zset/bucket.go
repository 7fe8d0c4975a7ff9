package zset

import "github.com/cespare/xxhash/v2"

// Buckets is the number of virtual buckets rows are hashed into. Workers
// own buckets, never rows: moving work between workers moves buckets.
const Buckets = 256

// Bucket returns the bucket of a routing key, the EncodeKey encoding of
// the values a row is routed by: XXH64 (seed 0) of the bytes, modulo
// Buckets. Values equal under SQL = have equal encodings (docs/format/
// keys.md), so they land in one bucket. The function is part of the
// on-disk and wire format and never changes.
func Bucket(key []byte) int { return int(xxhash.Sum64(key) % Buckets) }

// BucketOwner returns which of n workers owns bucket b: the buckets are
// split into n contiguous ranges of nearly equal size, worker i owning
// [ceil(i·256/n), ceil((i+1)·256/n)).
func BucketOwner(b, n int) int { return b * n / Buckets }
