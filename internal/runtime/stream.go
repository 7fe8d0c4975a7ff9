package runtime

import (
	"context"
	"fmt"

	"github.com/rockstream/rockstream/internal/zset"
)

// Statements whose results are not a finite list of rows (COPY to or from
// the client, SUBSCRIBE) return a Result with one of the fields below set;
// the caller (the gateway) moves the data and the engine interprets it.

// CopyIn is a COPY ... FROM STDIN waiting for its data. The caller sends
// the data to Session.CopyFrom (or abandons it with Session.CopyFail).
type CopyIn struct {
	// Binary is true for FORMAT binary (the overall format of the
	// CopyInResponse); text and CSV are false.
	Binary bool
	// Columns is the number of columns each row carries.
	Columns int

	spec *copySpec
}

// CopyOut is the data of a COPY ... TO STDOUT, produced one CopyData
// payload at a time.
type CopyOut struct {
	// Binary is true for FORMAT binary.
	Binary bool
	// Columns is the number of columns of each row.
	Columns int
	// Next returns the next payload (one row, or a header or trailer), and
	// io.EOF after the last. For COPY (SUBSCRIBE ...) TO STDOUT it blocks
	// until the next change is committed or ctx ends.
	Next func(ctx context.Context) ([]byte, error)
	// Close releases what Next holds; the caller calls it once, whether or
	// not Next reached io.EOF.
	Close func()

	// rows counts the rows Next has returned.
	rows int64
}

// Tag returns the command tag of the COPY, "COPY n" with n the rows sent
// so far; after Next returned io.EOF it is the statement's tag.
func (c *CopyOut) Tag() string { return fmt.Sprintf("COPY %d", c.rows) }

// Subscription is a running SUBSCRIBE: its snapshot, then each committed
// change, in epoch order (subscribe.go). Result.Columns describes its
// rows; Result.Tag is "SUBSCRIBE".
type Subscription struct {
	// Next returns the next rows (at most 1024), blocking until at least
	// one is available or ctx ends (then ctx's error, and the subscription
	// may be read again). It returns io.EOF once Close was called or the
	// engine is closing, and another error when the subscription cannot
	// go on (the view was dropped, or it fell behind the change-log
	// horizon).
	Next func(ctx context.Context) ([]zset.Row, error)
	// Close ends the subscription. It may be called from another
	// goroutine while Next waits, which then returns io.EOF; it holds no
	// goroutine, so a subscription never closed leaks nothing but memory.
	Close func()
}
