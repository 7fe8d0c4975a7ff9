package zset

import "github.com/rockstream/rockstream/internal/types"

// Row is one tuple of values, in its relation's column order.
type Row []types.Value

// Entry is a row with its weight: +n for n insertions, -n for n deletions.
type Entry struct {
	Row    Row
	Weight int64
}

// Batch is a Z-set: a collection of weighted rows. A consolidated batch has
// each distinct row once, sorted by its key encoding, with no zero weights.
type Batch []Entry
