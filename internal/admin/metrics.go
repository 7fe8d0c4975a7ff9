package admin

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// collector exposes the engine's and the gateway's counters as Prometheus
// metrics, read when scraped, so that one scrape sees one snapshot of
// each.
type collector struct {
	s *Server
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("rockstream_"+name, help, labels, nil)
}

var (
	buildInfoDesc = desc("build_info", "The running binary: always 1, labelled with its version and Go release.", "version", "goversion")
	readyDesc     = desc("ready", "1 when /ready answers 200 (recovered, listening, the storage taking writes), else 0.")

	committedEpochDesc = desc("committed_epoch", "The last committed epoch.")
	durableEpochDesc   = desc("durable_epoch", "The last epoch known to survive a machine crash (durable storage only).")
	recoveredEpochDesc = desc("recovered_epoch", "The epoch the engine recovered at start-up.")
	epochsDesc         = desc("epochs_committed_total", "Epochs committed since start-up.")
	commitSecondsDesc  = desc("epoch_commit_duration_seconds", "Time to write and sync one epoch's commit.")
	statementsDesc     = desc("statements_total", "Statements run, by kind.", "kind")
	errorsDesc         = desc("statement_errors_total", "Statements that failed, by SQLSTATE class.", "sqlstate_class")
	rowsWrittenDesc    = desc("rows_written_total", "Rows reported by successful INSERT, UPDATE and DELETE statements, by operation.", "op")
	relationsDesc      = desc("relations", "Relations in the catalog, by kind.", "kind")
	viewRowsDesc       = desc("view_rows", "Rows of each materialized view (count(*) over it).", "view")
	viewLastChangeDesc = desc("view_last_change_epoch", "The last epoch that changed each materialized view (0: none within the change-log retention).", "view")
	sessionsDesc       = desc("sessions", "Open engine sessions (one per client connection, plus internal ones).")

	gwOpenDesc     = desc("gateway_connections", "Open client connections.")
	gwTotalDesc    = desc("gateway_connections_accepted_total", "Client connections accepted since start-up.")
	gwRejectedDesc = desc("gateway_connections_rejected_total", "Client connections refused (connection limit, failed authentication).")
	gwCanceledDesc = desc("gateway_statements_canceled_total", "Statements canceled by a cancel request, the statement timeout or shutdown.")

	diskBytesDesc     = desc("storage_disk_bytes", "Space taken by the storage directory's files.")
	sstablesDesc      = desc("storage_sstables", "Live table files (SSTables) of the store.")
	cacheBytesDesc    = desc("storage_block_cache_bytes", "Memory held by the store's block cache.")
	cacheHitsDesc     = desc("storage_block_cache_hits_total", "Block cache hits since start-up.")
	cacheMissesDesc   = desc("storage_block_cache_misses_total", "Block cache misses since start-up.")
	memtableBytesDesc = desc("storage_memtable_bytes", "Committed data held in memory, not yet flushed to table files.")
	degradedDesc      = desc("storage_degraded", "1 while the storage refuses writes (the disk is full, or a failed write stopped it until it reopens itself), else 0.")
	recoveriesDesc    = desc("storage_recoveries_total", "Times the storage reopened itself after a failed write, without a restart.")
)

var allDescs = []*prometheus.Desc{
	buildInfoDesc, readyDesc,
	committedEpochDesc, durableEpochDesc, recoveredEpochDesc, epochsDesc, commitSecondsDesc,
	statementsDesc, errorsDesc, rowsWrittenDesc, relationsDesc, viewRowsDesc, viewLastChangeDesc, sessionsDesc,
	gwOpenDesc, gwTotalDesc, gwRejectedDesc, gwCanceledDesc,
	diskBytesDesc, sstablesDesc, cacheBytesDesc, cacheHitsDesc, cacheMissesDesc, memtableBytesDesc,
	degradedDesc, recoveriesDesc,
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	goVersion := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
	}
	gauge(buildInfoDesc, 1, c.s.cfg.Version, goVersion)
	ready := 0.0
	if c.s.ready.Load() && c.s.degradation() == nil {
		ready = 1
	}
	gauge(readyDesc, ready)

	if g := c.s.gateway(); g != nil {
		st := g.Stats()
		gauge(gwOpenDesc, float64(st.Connections))
		counter(gwTotalDesc, float64(st.ConnectionsTotal))
		counter(gwRejectedDesc, float64(st.Rejected))
		counter(gwCanceledDesc, float64(st.Canceled))
	}

	eng := c.s.eng.Load()
	if eng == nil {
		return
	}
	st := eng.Stats()
	gauge(committedEpochDesc, float64(st.Epoch))
	gauge(recoveredEpochDesc, float64(st.RecoveredEpoch))
	if st.Durable {
		gauge(durableEpochDesc, float64(st.DurableEpoch))
	}
	counter(epochsDesc, float64(st.EpochsCommitted))
	buckets := make(map[float64]uint64, len(st.CommitSeconds.Bounds))
	for i, b := range st.CommitSeconds.Bounds {
		buckets[b] = st.CommitSeconds.Cumulative[i]
	}
	ch <- prometheus.MustNewConstHistogram(commitSecondsDesc, st.CommitSeconds.Count, st.CommitSeconds.Sum, buckets)
	for kind, n := range st.Statements {
		counter(statementsDesc, float64(n), kind)
	}
	for class, n := range st.Errors {
		counter(errorsDesc, float64(n), class)
	}
	for op, n := range st.RowsWritten {
		counter(rowsWrittenDesc, float64(n), op)
	}
	gauge(sessionsDesc, float64(st.Sessions))

	tables, matviews, views := eng.ObjectCounts()
	gauge(relationsDesc, float64(tables), "table")
	gauge(relationsDesc, float64(matviews), "materialized_view")
	gauge(relationsDesc, float64(views), "view")
	infos, err := eng.Views()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(viewRowsDesc, err)
	}
	for _, v := range infos {
		gauge(viewRowsDesc, float64(v.Rows), v.Name)
		gauge(viewLastChangeDesc, float64(v.LastChange), v.Name)
	}

	if m, ok := eng.StorageMetrics(); ok {
		gauge(diskBytesDesc, float64(m.DiskBytes))
		gauge(sstablesDesc, float64(m.Tables))
		gauge(cacheBytesDesc, float64(m.CacheBytes))
		counter(cacheHitsDesc, float64(m.CacheHits))
		counter(cacheMissesDesc, float64(m.CacheMisses))
		gauge(memtableBytesDesc, float64(m.MemTableBytes))
		degraded := 0.0
		if m.Degraded {
			degraded = 1
		}
		gauge(degradedDesc, degraded)
		counter(recoveriesDesc, float64(m.Recoveries))
	}
}
