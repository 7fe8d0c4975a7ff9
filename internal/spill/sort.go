package spill

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
)

// Codec is how a Sorter holds its items: their order, their encoding in
// a run, and the memory each takes.
type Codec[T any] struct {
	// Compare orders items.
	Compare func(a, b T) int
	// Append appends an item's encoding to dst.
	Append func(dst []byte, t T) []byte
	// Decode decodes an encoding Append made.
	Decode func(b []byte) (T, error)
	// Size is the memory an item takes, as the governor counts it.
	Size func(t T) int64
	// Sort sorts items stably by Compare, stopping with ctx's error when
	// ctx ends.
	Sort func(ctx context.Context, items []T) error
}

// Sorter is an external merge sort: items are added to a buffer in
// memory until it holds the budget; the buffer is then sorted and
// written to a run file of the statement's, and emptied. Finish merges
// the runs (and what the buffer holds) into one stream in order, ties
// kept in the order they were added (runs are merged lowest first on
// equal items). A sort that never fills its buffer writes nothing.
type Sorter[T any] struct {
	stmt   *Statement
	acct   *memgov.Account
	budget int64
	codec  Codec[T]

	buf      []T
	bufBytes int64
	runs     []*os.File
	scratch  []byte
}

// NewSorter returns an empty sorter writing its runs into stmt's
// directory past budget bytes (at least MinBudget), charging its buffer
// to acct.
func NewSorter[T any](stmt *Statement, acct *memgov.Account, budget int64, codec Codec[T]) *Sorter[T] {
	return &Sorter[T]{stmt: stmt, acct: acct, budget: max(budget, MinBudget), codec: codec}
}

// Runs returns how many runs the sorter has written.
func (s *Sorter[T]) Runs() int { return len(s.runs) }

// Add adds an item.
func (s *Sorter[T]) Add(ctx context.Context, t T) error {
	n := s.codec.Size(t)
	s.buf = append(s.buf, t)
	s.bufBytes += n
	s.acct.Charge(n)
	if s.bufBytes > s.budget && s.stmt != nil {
		return s.writeRun(ctx)
	}
	return nil
}

// writeRun sorts the buffer into a new run and empties it.
func (s *Sorter[T]) writeRun(ctx context.Context) error {
	if err := s.codec.Sort(ctx, s.buf); err != nil {
		return err
	}
	f, err := s.stmt.createFile("run")
	if err != nil {
		return err
	}
	s.runs = append(s.runs, f)
	w := bufio.NewWriterSize(f, 64<<10)
	var written int64
	for i, t := range s.buf {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		s.scratch = s.codec.Append(s.scratch[:0], t)
		var head [binary.MaxVarintLen64]byte
		h := binary.PutUvarint(head[:], uint64(len(s.scratch)))
		if _, err := w.Write(head[:h]); err != nil {
			return diskError(err)
		}
		if _, err := w.Write(s.scratch); err != nil {
			return diskError(err)
		}
		written += int64(h + len(s.scratch))
	}
	if err := w.Flush(); err != nil {
		return diskError(err)
	}
	if err := s.stmt.wrote(written); err != nil {
		return err
	}
	noteSpill(written)
	clear(s.buf)
	s.buf = s.buf[:0]
	s.acct.Charge(-s.bufBytes)
	s.bufBytes = 0
	return nil
}

// Finish returns the sorted items. Add must not be called after it.
func (s *Sorter[T]) Finish(ctx context.Context) (*Merged[T], error) {
	if len(s.runs) == 0 {
		if err := s.codec.Sort(ctx, s.buf); err != nil {
			return nil, err
		}
		return &Merged[T]{s: s, mem: s.buf}, nil
	}
	if len(s.buf) > 0 {
		if err := s.writeRun(ctx); err != nil {
			return nil, err
		}
	}
	m := &Merged[T]{s: s}
	for i, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, diskError(err)
		}
		c := &cursor[T]{run: i, r: bufio.NewReaderSize(f, 32<<10)}
		ok, err := c.next(s.codec)
		if err != nil {
			return nil, err
		}
		if ok {
			m.heap = append(m.heap, c)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

// Close returns the buffer's charge and closes the runs (their files go
// with the statement's directory).
func (s *Sorter[T]) Close() error {
	var err error
	for _, f := range s.runs {
		if cerr := f.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
			err = errors.Join(err, diskError(cerr))
		}
		if rerr := os.Remove(f.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, diskError(rerr))
		}
	}
	s.runs = nil
	s.buf = nil
	s.acct.Charge(-s.bufBytes)
	s.bufBytes = 0
	return err
}

// cursor is a run being merged: its next item.
type cursor[T any] struct {
	run  int
	r    *bufio.Reader
	item T
	body []byte
}

func (c *cursor[T]) next(codec Codec[T]) (bool, error) {
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, diskError(err)
	}
	// A new buffer for each record: the decoded item may refer to it.
	c.body = make([]byte, n)
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return false, errs.Newf(errs.IOError, "temporary file: a run ends within a record: %v", err)
	}
	if c.item, err = codec.Decode(c.body); err != nil {
		return false, err
	}
	return true, nil
}

// Merged is a sorter's items in order.
type Merged[T any] struct {
	s    *Sorter[T]
	mem  []T // the items, when nothing was spilled
	heap []*cursor[T]
	n    int
}

// Next returns the next item; ok is false after the last.
func (m *Merged[T]) Next(ctx context.Context) (t T, ok bool, err error) {
	m.n++
	if m.n%1024 == 0 && ctx.Err() != nil {
		return t, false, context.Cause(ctx)
	}
	if m.heap == nil {
		if len(m.mem) == 0 {
			return t, false, nil
		}
		t = m.mem[0]
		m.mem = m.mem[1:]
		return t, true, nil
	}
	if len(m.heap) == 0 {
		return t, false, nil
	}
	c := m.heap[0]
	t = c.item
	more, err := c.next(m.s.codec)
	if err != nil {
		return t, false, err
	}
	if more {
		m.down(0)
	} else {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
		if last > 0 {
			m.down(0)
		}
	}
	return t, true, nil
}

// less orders the cursors by their items, then by run (earlier first).
func (m *Merged[T]) less(i, j int) bool {
	a, b := m.heap[i], m.heap[j]
	if c := m.s.codec.Compare(a.item, b.item); c != 0 {
		return c < 0
	}
	return a.run < b.run
}

func (m *Merged[T]) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(r, l) {
			j = r
		}
		if !m.less(j, i) {
			return
		}
		m.heap[i], m.heap[j] = m.heap[j], m.heap[i]
		i = j
	}
}
