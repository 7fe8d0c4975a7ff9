package spill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/memgov"
)

// Area is an engine's directory for temporary files.
type Area struct {
	// root is the directory; for an area of its own under a parent
	// (NewTempArea), created at the first spill.
	root   string
	parent string
	owned  bool // the area made root and removes it on Close
	seq    atomic.Int64

	mu struct {
		sync.Mutex
		made bool
	}
}

// OpenArea returns the area in dir (a durable store's <storage>/tmp),
// removing whatever an earlier process left there: no statement of this
// process has spilled yet, so all of it is garbage.
func OpenArea(dir string) (*Area, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, errs.Newf(errs.IOError, "removing old temporary files in %s: %v", dir, err)
	}
	return &Area{root: dir}, nil
}

// NewTempArea returns an area of its own in a new directory under parent
// (empty: os.TempDir()), made at the first spill and removed on Close:
// for an engine without a storage directory.
func NewTempArea(parent string) *Area {
	if parent == "" {
		parent = os.TempDir()
	}
	return &Area{parent: parent, owned: true}
}

// Root returns the area's directory ("" while an area of its own has not
// been made).
func (a *Area) Root() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.root
}

// Close removes the area's directory when it made it, and its contents
// otherwise. The engine closes it when no statement runs.
func (a *Area) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.root == "" {
		return nil
	}
	if err := os.RemoveAll(a.root); err != nil {
		return errs.Newf(errs.IOError, "removing temporary files in %s: %v", a.root, err)
	}
	if a.owned {
		a.root = ""
	}
	a.mu.made = false
	return nil
}

// mkdir makes a new directory for one statement in the area.
func (a *Area) mkdir() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.root == "" {
		dir, err := os.MkdirTemp(a.parent, "rockstream-tmp-")
		if err != nil {
			return "", diskError(err)
		}
		a.root, a.mu.made = dir, true
	}
	if !a.mu.made {
		if err := os.MkdirAll(a.root, 0o700); err != nil {
			return "", diskError(err)
		}
		a.mu.made = true
	}
	dir := filepath.Join(a.root, fmt.Sprintf("stmt-%d", a.seq.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", diskError(err)
	}
	return dir, nil
}

// Statement is one statement's temporary files: a directory in its
// area, made at the statement's first spill, and the stores and runs in
// it. Its methods are safe for concurrent use; a nil *Statement (a
// statement that may not spill) refuses to.
type Statement struct {
	area *Area
	// limit is temp_file_limit in bytes (<0: none).
	limit   int64
	written atomic.Int64
	writes  atomic.Int64

	mu struct {
		sync.Mutex
		dir    string
		n      int
		closed bool
		stores map[*Store]struct{}
		files  []*os.File
	}
}

type statementKey struct{}

// WithStatement returns ctx carrying a new Statement in area (nil: ctx
// as it is, and no Statement), with tempFileLimit bytes at most written
// (<0: no limit).
func WithStatement(ctx context.Context, area *Area, tempFileLimit int64) (context.Context, *Statement) {
	if area == nil {
		return ctx, nil
	}
	s := &Statement{area: area, limit: tempFileLimit}
	return context.WithValue(ctx, statementKey{}, s), s
}

// From returns the Statement ctx carries (nil: none).
func From(ctx context.Context) *Statement {
	s, _ := ctx.Value(statementKey{}).(*Statement)
	return s
}

// Written returns the bytes the statement has written to temporary
// files.
func (s *Statement) Written() int64 {
	if s == nil {
		return 0
	}
	return s.written.Load()
}

// newPath returns a new path in the statement's directory, making the
// directory first if need be.
func (s *Statement) newPath(kind string) (string, error) {
	if s == nil {
		return "", errs.New(errs.Internal, "internal error: a spill outside a statement")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return "", errs.New(errs.QueryCanceled, "canceling statement: its temporary files are gone")
	}
	if s.mu.dir == "" {
		dir, err := s.area.mkdir()
		if err != nil {
			return "", err
		}
		s.mu.dir = dir
	}
	s.mu.n++
	return filepath.Join(s.mu.dir, fmt.Sprintf("%s-%d", kind, s.mu.n)), nil
}

// createFile creates a new temporary file of the statement's, removed
// with its directory.
func (s *Statement) createFile(kind string) (*os.File, error) {
	path, err := s.newPath(kind)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, diskError(err)
	}
	s.mu.Lock()
	s.mu.files = append(s.mu.files, f)
	s.mu.Unlock()
	return f, nil
}

func (s *Statement) track(st *Store) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.mu.stores == nil {
		s.mu.stores = map[*Store]struct{}{}
	}
	s.mu.stores[st] = struct{}{}
	s.mu.Unlock()
}

func (s *Statement) untrack(st *Store) {
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.mu.stores, st)
	s.mu.Unlock()
}

// wrote counts n bytes written to the statement's temporary files,
// failing with 53400 when they take it past its temp_file_limit.
func (s *Statement) wrote(n int64) error {
	if s == nil {
		return nil
	}
	total := s.written.Add(n)
	s.writes.Add(1)
	if s.limit >= 0 && total > s.limit {
		return &errs.Error{Code: errs.TempFileLimit, SQLState: "53400",
			Message: fmt.Sprintf("temporary file size exceeds temp_file_limit (%s)", memgov.FormatBytes(s.limit))}
	}
	return nil
}

// Close closes the statement's stores and files and removes its
// directory. The statement must no longer use them; closing twice does
// nothing.
func (s *Statement) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	s.mu.closed = true
	var err error
	for st := range s.mu.stores {
		err = errors.Join(err, st.closeDisk())
	}
	for _, f := range s.mu.files {
		f.Close() // already closed by its reader, or abandoned
	}
	s.mu.stores, s.mu.files = nil, nil
	if s.mu.dir != "" {
		statements.Add(1)
		logger.Load().Debug("statement spilled to disk", "dir", s.mu.dir, "writes", s.writes.Load(), "bytes", s.written.Load())
		if rerr := os.RemoveAll(s.mu.dir); rerr != nil {
			err = errors.Join(err, errs.Newf(errs.IOError, "removing temporary files in %s: %v", s.mu.dir, rerr))
		}
	}
	return err
}

// isNoSpace reports whether err is a full disk's.
func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// logger receives a debug line for each statement that spilled.
var logger atomic.Pointer[slog.Logger]

func init() { logger.Store(slog.Default()) }

// SetLogger makes l receive the debug line of each statement that
// spilled.
func SetLogger(l *slog.Logger) { logger.Store(l) }

// Counters of what statements spilled, since the process started.
var (
	statements   atomic.Int64 // statements that spilled
	spills       atomic.Int64 // batches of state moved to disk
	spilledBytes atomic.Int64 // bytes of state and runs written
)

func noteSpill(n int64) {
	spills.Add(1)
	spilledBytes.Add(n)
}

// Stats is what statements have spilled since the process started.
type Stats struct {
	// Statements counts the statements that spilled (counted when they
	// end).
	Statements int64
	// Spills counts the batches of operator state and the sort runs
	// written to disk.
	Spills int64
	// Bytes is what they held.
	Bytes int64
}

// Totals returns the process's spill counters.
func Totals() Stats {
	return Stats{Statements: statements.Load(), Spills: spills.Load(), Bytes: spilledBytes.Load()}
}
