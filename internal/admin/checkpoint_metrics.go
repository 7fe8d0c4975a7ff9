package admin

import "github.com/prometheus/client_golang/prometheus"

// checkpointCollector exposes the online checkpoints' counters
// (runtime.Engine.CheckpointStats), read when scraped.
type checkpointCollector struct {
	s *Server
}

var (
	checkpointsDesc            = desc("checkpoints_total", "Online checkpoints since start-up, by outcome (ok, error).", "outcome")
	lastCheckpointTimeDesc     = desc("last_checkpoint_timestamp_seconds", "When the last successful online checkpoint ended, in Unix seconds (absent before the first).")
	lastCheckpointEpochDesc    = desc("last_checkpoint_epoch", "The epoch the last successful online checkpoint holds.")
	lastCheckpointSecondsDesc  = desc("last_checkpoint_duration_seconds", "How long the last successful online checkpoint took.")
	lastCheckpointUploadedDesc = desc("last_checkpoint_uploaded_bytes", "Bytes the last successful online checkpoint uploaded (files the location did not hold yet).")
)

// Describe implements prometheus.Collector.
func (c *checkpointCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{checkpointsDesc, lastCheckpointTimeDesc, lastCheckpointEpochDesc, lastCheckpointSecondsDesc, lastCheckpointUploadedDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *checkpointCollector) Collect(ch chan<- prometheus.Metric) {
	eng := c.s.eng.Load()
	if eng == nil {
		return
	}
	st := eng.CheckpointStats()
	ch <- prometheus.MustNewConstMetric(checkpointsDesc, prometheus.CounterValue, float64(st.Succeeded), "ok")
	ch <- prometheus.MustNewConstMetric(checkpointsDesc, prometheus.CounterValue, float64(st.Failed), "error")
	if st.LastSuccess.IsZero() {
		return
	}
	ch <- prometheus.MustNewConstMetric(lastCheckpointTimeDesc, prometheus.GaugeValue, float64(st.LastSuccess.UnixNano())/1e9)
	ch <- prometheus.MustNewConstMetric(lastCheckpointEpochDesc, prometheus.GaugeValue, float64(st.LastEpoch))
	ch <- prometheus.MustNewConstMetric(lastCheckpointSecondsDesc, prometheus.GaugeValue, st.LastDuration.Seconds())
	ch <- prometheus.MustNewConstMetric(lastCheckpointUploadedDesc, prometheus.GaugeValue, float64(st.LastUploadedBytes))
}
