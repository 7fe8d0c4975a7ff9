package runtime

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
)

// ResourceUsage is what the engine uses: memory, disk, and the stored
// state of every table and materialized view (`rockstream resource
// usage`, GET /admin/resources).
type ResourceUsage struct {
	Epoch     uint64          `json:"epoch"`
	Memory    MemoryUsage     `json:"memory"`
	Disk      *DiskUsage      `json:"disk,omitempty"`
	Relations []RelationUsage `json:"relations"`
}

// MemoryUsage is the process's memory.
type MemoryUsage struct {
	// RSSBytes is the resident set size (0 where it cannot be read);
	// HeapBytes the Go heap in use, SysBytes what the Go runtime obtained
	// from the system.
	RSSBytes  uint64 `json:"rss_bytes"`
	HeapBytes uint64 `json:"heap_bytes"`
	SysBytes  uint64 `json:"sys_bytes"`
	// CacheBytes is the storage's block cache, MemTableBytes the
	// committed data not yet flushed to tables.
	CacheBytes    int64  `json:"cache_bytes"`
	MemTableBytes uint64 `json:"memtable_bytes"`
}

// DiskUsage is the storage directory's size.
type DiskUsage struct {
	Dir string `json:"dir"`
	// TotalBytes counts every file under Dir; TableBytes the tables
	// (.sst), LogBytes the write-ahead log (.log), AuxiliaryBytes the
	// audit log and checkpoint copies being uploaded.
	TotalBytes     int64 `json:"total_bytes"`
	TableBytes     int64 `json:"table_bytes"`
	LogBytes       int64 `json:"log_bytes"`
	AuxiliaryBytes int64 `json:"auxiliary_bytes"`
	Tables         int64 `json:"tables"`
}

// RelationUsage is one table's or materialized view's stored state, in
// logical bytes (keys and values as written, before compression).
type RelationUsage struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "table" or "materialized view"
	// Rows is the relation's row count; RowKeys and RowBytes what its
	// rows take.
	Rows     int64 `json:"rows"`
	RowKeys  int64 `json:"row_keys"`
	RowBytes int64 `json:"row_bytes"`
	// StateKeys and StateBytes are a view's operator state; ChangeLog*
	// its change log (AS OF EPOCH, SUBSCRIBE).
	StateKeys      int64 `json:"state_keys"`
	StateBytes     int64 `json:"state_bytes"`
	ChangeLogKeys  int64 `json:"change_log_keys"`
	ChangeLogBytes int64 `json:"change_log_bytes"`
}

// ResourceUsage measures what the engine uses. It reads every stored key
// of the tables and views once, at the last committed epoch: its cost
// grows with the data.
func (e *Engine) ResourceUsage(ctx context.Context) (*ResourceUsage, error) {
	s := e.NewSession()
	defer s.Close()
	r, cat, done, err := s.readView(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	u := &ResourceUsage{Epoch: e.Epoch()}
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	u.Memory = MemoryUsage{RSSBytes: rss(), HeapBytes: ms.HeapInuse, SysBytes: ms.Sys}
	e.mu.RLock()
	store := e.mu.store
	e.mu.RUnlock()
	if db, ok := store.(*storage.DB); ok {
		m := db.Metrics()
		u.Memory.CacheBytes, u.Memory.MemTableBytes = m.CacheBytes, m.MemTableBytes
		u.Disk = diskUsage(db.Dir())
		u.Disk.Tables = m.Tables
	}
	for _, o := range cat.byName {
		if o.system != nil || (o.kind != sql.Table && o.kind != sql.MaterializedView) {
			continue
		}
		ru := RelationUsage{Name: o.name, Kind: "table"}
		if o.kind == sql.MaterializedView {
			ru.Kind = "materialized view"
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if ru.RowKeys, ru.RowBytes, err = prefixSize(r, o.rowsPrefix()); err != nil {
			return nil, err
		}
		if o.kind == sql.MaterializedView {
			if ru.Rows, err = viewRows(r, o); err != nil {
				return nil, err
			}
			if ru.StateKeys, ru.StateBytes, err = prefixSize(r, relPrefix(nsOpState, o.id)); err != nil {
				return nil, err
			}
			if ru.ChangeLogKeys, ru.ChangeLogBytes, err = prefixSize(r, relPrefix(nsChangeLog, o.id)); err != nil {
				return nil, err
			}
		} else {
			ru.Rows = ru.RowKeys
		}
		u.Relations = append(u.Relations, ru)
	}
	slices.SortFunc(u.Relations, func(a, b RelationUsage) int { return strings.Compare(a.Name, b.Name) })
	return u, nil
}

// prefixSize counts the keys under prefix and their bytes.
func prefixSize(r state.Reader, prefix []byte) (keys, bytes int64, err error) {
	err = r.Scan(prefix, state.PrefixEnd(prefix), func(k, v []byte) bool {
		keys++
		bytes += int64(len(k) + len(v))
		return true
	})
	return keys, bytes, err
}

// diskUsage sums the files under dir.
func diskUsage(dir string) *DiskUsage {
	d := &DiskUsage{Dir: dir}
	_ = filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return nil
		}
		n := info.Size()
		d.TotalBytes += n
		rel, _ := filepath.Rel(dir, path)
		switch {
		case strings.HasPrefix(rel, "tmp"+string(filepath.Separator)):
			// Queries' temporary files (spillquery.go): in the total
			// alone, although their Pebble instances have tables too.
		case strings.HasPrefix(rel, "auxiliary"+string(filepath.Separator)):
			d.AuxiliaryBytes += n
		case strings.HasSuffix(rel, ".sst"):
			d.TableBytes += n
		case strings.HasSuffix(rel, ".log"):
			d.LogBytes += n
		}
		return nil
	})
	return d
}

// rss reads the process's resident set size from /proc (Linux); 0
// elsewhere.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
