package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/instance"
)

// storageFlags are the flags that say where and how an instance keeps its
// data, shared by every command that opens one.
type storageFlags struct {
	dir        string
	durability string
	cache      byteSize
	workers    int
	minRows    int
	tempDir    string
}

func (f *storageFlags) register(fs *pflag.FlagSet, dirHelp string) {
	fs.StringVar(&f.dir, "storage", "", dirHelp)
	fs.StringVar(&f.durability, "durability", "sync", "`sync` (fsync every epoch) or relaxed (for benchmarks: a crash may lose recent epochs)")
	f.cache = 256 << 20
	fs.Var(&f.cache, "cache-size", "memory for the storage's block cache, e.g. 512MB or 2GB")
	fs.IntVar(&f.workers, "workers", 0, "workers that run the views' circuits and queries in parallel (default: the number of cores)")
	fs.StringVar(&f.tempDir, "temp-dir", "", "directory under which queries spill sorts and state past work_mem, in a directory of the server's own (default: <storage>/tmp, or the system's temporary directory without --storage)")
	fs.IntVar(&f.minRows, "parallel-min-rows", 0, fmt.Sprintf("smallest change, in rows, that a step of a view or query splits between the workers (default %d)", diff.DefaultMinRows))
}

// options returns the instance options the flags describe.
func (f *storageFlags) options() (instance.Options, error) {
	opts := instance.Options{Storage: f.dir, CacheBytes: int64(f.cache), Workers: f.workers, ParallelMinRows: f.minRows, TempDir: f.tempDir}
	switch f.durability {
	case "sync":
	case "relaxed":
		opts.Relaxed = true
	default:
		return opts, usageError{fmt.Errorf("--durability must be sync or relaxed, not %q", f.durability)}
	}
	if f.workers < 0 || f.workers > maxWorkers {
		return opts, usageError{fmt.Errorf("--workers must be between 1 and %d (or 0, the number of cores)", maxWorkers)}
	}
	if f.minRows < 0 {
		return opts, usageError{fmt.Errorf("--parallel-min-rows must not be negative")}
	}
	if f.cache <= 0 {
		return opts, usageError{fmt.Errorf("--cache-size must be positive")}
	}
	return opts, nil
}

// maxWorkers bounds --workers: a worker owns at least one of the 256
// buckets.
const maxWorkers = 256

// byteSize is a flag holding a number of bytes, written as a number with
// an optional unit: B, kB, MB, GB, TB (multiples of 1024, as in
// PostgreSQL's settings) or KiB, MiB, GiB, TiB.
type byteSize int64

var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1 << 10, "kib": 1 << 10, "k": 1 << 10,
	"mb": 1 << 20, "mib": 1 << 20, "m": 1 << 20,
	"gb": 1 << 30, "gib": 1 << 30, "g": 1 << 30,
	"tb": 1 << 40, "tib": 1 << 40, "t": 1 << 40,
}

func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	unit, ok := byteUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if i == 0 || !ok {
		return 0, fmt.Errorf("%q is not a size: write a number of bytes with an optional unit (kB, MB, GB, TB), e.g. 512MB", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * unit, nil
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func (b *byteSize) Type() string { return "size" }

// String is the size in the largest unit that divides it; "0" for no
// size, which --help takes for "no default" (the flag's text says what
// zero means).
func (b *byteSize) String() string {
	n := int64(*b)
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
