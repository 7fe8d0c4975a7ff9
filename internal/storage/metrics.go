package storage

// Metrics is a summary of a DB's size and cache behaviour.
type Metrics struct {
	// DiskBytes is the space the database's files take, obsolete files
	// not yet deleted included.
	DiskBytes uint64
	// Tables is the number of live tables (SST files).
	Tables int64
	// CacheBytes is the memory the block cache holds; CacheHits and
	// CacheMisses count block lookups since Open.
	CacheBytes  int64
	CacheHits   int64
	CacheMisses int64
	// MemTableBytes is the memory of committed data not yet flushed.
	MemTableBytes uint64
	// Degraded says that the DB refuses writes (Health is not nil): the
	// disk is full, or a failed write stopped it.
	Degraded bool
	// Recoveries counts the recoveries from a failed write without a
	// restart.
	Recoveries int64
}

// Metrics returns the DB's current metrics.
func (d *DB) Metrics() Metrics {
	if d.closed.Load() {
		return Metrics{}
	}
	health := Metrics{Degraded: d.Health() != nil, Recoveries: d.recoveries.Load()}
	if !d.pin() {
		return health
	}
	defer d.exit()
	m := d.db.Metrics()
	var tables int64
	for _, l := range m.Levels {
		tables += l.TablesCount
	}
	return Metrics{
		DiskBytes:     m.DiskSpaceUsage(),
		Tables:        tables,
		CacheBytes:    m.BlockCache.Size,
		CacheHits:     m.BlockCache.Hits,
		CacheMisses:   m.BlockCache.Misses,
		MemTableBytes: m.MemTable.Size,
		Degraded:      health.Degraded,
		Recoveries:    health.Recoveries,
	}
}
