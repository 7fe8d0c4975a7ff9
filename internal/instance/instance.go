// Package instance opens a RockStream engine on its storage: in memory, or
// a Pebble store in a directory. The embedded API and `rockstream start`
// open instances the same way through it.
package instance

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

// Options configures an instance; the embedded API's Options document each
// field.
type Options struct {
	Storage            string
	Relaxed            bool
	CacheBytes         int64
	ChangeLogRetention uint64
	Logger             *slog.Logger
	Workers            int
	ParallelMinRows    int
	Clock              func() time.Time
	TempDir            string
}

// Open opens the engine described by opts, recovering a durable instance
// from its directory.
func Open(opts Options) (*runtime.Engine, error) {
	ropts := runtime.Options{ChangeLogRetention: opts.ChangeLogRetention, Workers: opts.Workers, ParallelMinRows: opts.ParallelMinRows, Clock: opts.Clock}
	// Queries spill into <storage>/tmp, or into a directory of their own
	// under the temporary directory given (the system's by default).
	switch {
	case opts.TempDir != "":
		ropts.TempParent = opts.TempDir
	case opts.Storage != "":
		ropts.TempDir = filepath.Join(opts.Storage, "tmp")
	}
	if opts.Storage == "" {
		return runtime.Open(runtime.NewMemoryStore(), ropts)
	}
	durability := storage.Sync
	if opts.Relaxed {
		durability = storage.Relaxed
	}
	cache := opts.CacheBytes
	if cache == 0 {
		cache = 256 << 20
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	st, err := storage.Open(storage.Options{Dir: opts.Storage, Durability: durability, CacheBytes: cache, Logger: logger, EpochKey: runtime.FrontierKey()})
	if err != nil {
		return nil, err
	}
	if isLake, err := lake.IsLake(st); err != nil || isLake {
		if err == nil {
			err = errs.Newf(errs.WrongObjectType, "%s holds a RockLake catalog, not a RockStream database: serve it with `rockstream lake --storage %s`", opts.Storage, opts.Storage)
		}
		return nil, errors.Join(err, st.Close())
	}
	eng, err := runtime.Open(st, ropts)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return eng, nil
}
