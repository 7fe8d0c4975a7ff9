package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rockstream/rockstream/internal/spill"
)

// spillCollector exposes what statements spilled to temporary files past
// work_mem (internal/spill), read when scraped.
type spillCollector struct{}

var (
	spillStatementsDesc = desc("spill_statements_total", "Statements that spilled sorts or operator state to temporary files past work_mem, since start-up.")
	spillWritesDesc     = desc("spill_writes_total", "Batches of operator state and sorted runs written to temporary files, since start-up.")
	spillBytesDesc      = desc("spill_bytes_total", "Bytes written to temporary files by spilling statements, since start-up.")
)

// Describe implements prometheus.Collector.
func (spillCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- spillStatementsDesc
	ch <- spillWritesDesc
	ch <- spillBytesDesc
}

// Collect implements prometheus.Collector.
func (spillCollector) Collect(ch chan<- prometheus.Metric) {
	st := spill.Totals()
	ch <- prometheus.MustNewConstMetric(spillStatementsDesc, prometheus.CounterValue, float64(st.Statements))
	ch <- prometheus.MustNewConstMetric(spillWritesDesc, prometheus.CounterValue, float64(st.Spills))
	ch <- prometheus.MustNewConstMetric(spillBytesDesc, prometheus.CounterValue, float64(st.Bytes))
}
