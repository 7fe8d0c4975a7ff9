package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rockstream/rockstream/internal/runtime"
)

// observeCollector exposes what the console shows as metrics: the state
// each materialized view keeps, the frontier's lag, and the connectors'
// status, read when scraped.
type observeCollector struct {
	s *Server
}

var (
	viewStateKeysDesc  = desc("view_state_keys", "Keys of operator state each materialized view's circuit stores (counted up to runtime.MetricsStateScanLimit keys).", "view")
	viewStateBytesDesc = desc("view_state_bytes", "Bytes (keys and values) of operator state each materialized view's circuit stores (counted up to runtime.MetricsStateScanLimit keys).", "view")
	viewDeltaRowsDesc  = desc("view_delta_rows_total", "Rows of change (delta entries) each materialized view's circuit produced since start-up.", "view")

	frontierLagDesc = desc("frontier_lag_epochs", "Committed epochs not yet known to survive a machine crash (committed minus durable epoch; durable storage only).")
	frontierAgeDesc = desc("frontier_age_seconds", "Seconds since the frontier last advanced (the last committed epoch, or start-up).")

	connectorStateDesc    = desc("connector_state", "1 for each source and sink, labelled with its current state (starting, running, paused, failed, stopped).", "name", "kind", "type", "state")
	connectorLagDesc      = desc("connector_lag_records", "How far behind its upstream each connector is, in records (absent when unknown).", "name", "kind", "type")
	connectorRecordsDesc  = desc("connector_records_total", "Records each connector handled since start-up.", "name", "kind", "type")
	connectorErrorsDesc   = desc("connector_errors_total", "Records each connector rejected since start-up.", "name", "kind", "type")
	connectorFailuresDesc = desc("connector_failures_total", "Times each connector failed and was restarted since start-up.", "name", "kind", "type")
)

var observeDescs = []*prometheus.Desc{
	viewStateKeysDesc, viewStateBytesDesc, viewDeltaRowsDesc,
	frontierLagDesc, frontierAgeDesc,
	connectorStateDesc, connectorLagDesc, connectorRecordsDesc, connectorErrorsDesc, connectorFailuresDesc,
}

// Describe implements prometheus.Collector.
func (c *observeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range observeDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *observeCollector) Collect(ch chan<- prometheus.Metric) {
	eng := c.s.eng.Load()
	if eng == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	st := eng.Stats()
	if st.Durable {
		gauge(frontierLagDesc, float64(st.Epoch-st.DurableEpoch))
	}
	gauge(frontierAgeDesc, time.Since(eng.LastCommit()).Seconds())

	states, err := eng.ViewStates()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(viewStateKeysDesc, err)
	}
	for _, v := range states {
		gauge(viewStateKeysDesc, float64(v.State.Keys), v.Name)
		gauge(viewStateBytesDesc, float64(v.State.Bytes), v.Name)
		counter(viewDeltaRowsDesc, float64(v.RowsProcessed), v.Name)
	}

	cat, err := eng.Catalog()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(connectorStateDesc, err)
		return
	}
	for _, cn := range cat.Connectors {
		labels := []string{cn.Name, connectorKind(cn), cn.Connector}
		gauge(connectorStateDesc, 1, append(labels, cn.Status.State)...)
		if !cn.Running {
			continue
		}
		if cn.Status.Lag >= 0 {
			gauge(connectorLagDesc, float64(cn.Status.Lag), labels...)
		}
		counter(connectorRecordsDesc, float64(cn.Status.Records), labels...)
		counter(connectorErrorsDesc, float64(cn.Status.Errors), labels...)
		counter(connectorFailuresDesc, float64(cn.Status.Failures), labels...)
	}
}

func connectorKind(c runtime.ConnectorInfo) string {
	if c.Sink {
		return "sink"
	}
	return "source"
}
