package admin

import "testing"

// TestObserveMetrics checks the view state, frontier and connector
// metrics of a live server against the engine and the connectors'
// reports.
func TestObserveMetrics(t *testing.T) {
	l := startLive(t, nil)
	l.schema(t)
	l.waitConnectors(t)
	fams := scrape(t, l.hs.URL)
	states, err := l.eng.ViewStates()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 {
		t.Fatalf("view states: %+v", states)
	}
	for _, v := range states {
		if got, ok := value(fams, "rockstream_view_state_keys", "view", v.Name); !ok || got != float64(v.State.Keys) {
			t.Errorf("view_state_keys{%s} = %v (present %v), want %d", v.Name, got, ok, v.State.Keys)
		}
		if got, ok := value(fams, "rockstream_view_state_bytes", "view", v.Name); !ok || got != float64(v.State.Bytes) || got <= 0 {
			t.Errorf("view_state_bytes{%s} = %v (present %v), want %d", v.Name, got, ok, v.State.Bytes)
		}
		if got, ok := value(fams, "rockstream_view_delta_rows_total", "view", v.Name); !ok || got != float64(v.RowsProcessed) || got <= 0 {
			t.Errorf("view_delta_rows_total{%s} = %v (present %v), want %d", v.Name, got, ok, v.RowsProcessed)
		}
	}
	// spend has 6 groups after its 60 orders: its delta rows are its 6
	// inserts.
	if got, _ := value(fams, "rockstream_view_delta_rows_total", "view", "spend"); got != 6 {
		t.Errorf("spend's delta rows: %v, want 6", got)
	}
	if got, ok := value(fams, "rockstream_frontier_lag_epochs"); !ok || got != 0 {
		t.Errorf("frontier_lag_epochs with sync durability = %v (present %v)", got, ok)
	}
	if got, ok := value(fams, "rockstream_frontier_age_seconds"); !ok || got < 0 || got > 60 {
		t.Errorf("frontier_age_seconds = %v (present %v)", got, ok)
	}
	src := []string{"name", "orders_feed", "kind", "source", "type", "steady"}
	for name, want := range map[string]float64{
		"rockstream_connector_lag_records": 42, "rockstream_connector_records_total": 7,
		"rockstream_connector_errors_total": 1, "rockstream_connector_failures_total": 0,
	} {
		if got, ok := value(fams, name, src...); !ok || got != want {
			t.Errorf("%s{orders_feed} = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got, ok := value(fams, "rockstream_connector_state", append(src, "state", "running")...); !ok || got != 1 {
		t.Errorf("connector_state{orders_feed, running} = %v (present %v)", got, ok)
	}
	broken := []string{"name", "customers_feed", "kind", "source", "type", "broken"}
	if got, ok := value(fams, "rockstream_connector_state", append(broken, "state", "failed")...); !ok || got != 1 {
		t.Errorf("connector_state{customers_feed, failed} = %v (present %v)", got, ok)
	}
	if got, ok := value(fams, "rockstream_connector_failures_total", broken...); !ok || got < 2 {
		t.Errorf("connector_failures_total{customers_feed} = %v (present %v)", got, ok)
	}
	if _, ok := value(fams, "rockstream_connector_lag_records", broken...); ok {
		t.Error("a lag reported for a connector whose lag is unknown")
	}
	if n := len(fams["rockstream_connector_state"].GetMetric()); n != 2 {
		t.Errorf("%d connector_state series for 2 connectors", n)
	}
}
