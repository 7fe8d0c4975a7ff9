package admin

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboardPath is the Grafana dashboard shipped in docs/.
const dashboardPath = "../../docs/grafana/rockstream.json"

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	labelValues  = regexp.MustCompile(`label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`)
)

var promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "offset": true, "bool": true, "inf": true, "nan": true, "by": true, "without": true}

// promMetrics returns the metric names a PromQL expression reads:
// identifiers outside strings, label matchers, ranges and grouping
// clauses that are not functions (followed by a parenthesis), keywords or
// numbers.
func promMetrics(expr string) []string {
	e := promString.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promRange.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		if loc[0] > 0 && (e[loc[0]-1] == '$' || e[loc[0]-1] == '.' || (e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9')) {
			continue // a variable, or the exponent of a number
		}
		if rest := strings.TrimLeft(e[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") || promKeywords[strings.ToLower(name)] {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func TestPromMetrics(t *testing.T) {
	for expr, want := range map[string]string{
		`histogram_quantile(0.99, sum by (le) (rate(a_bucket{instance=~"$instance"}[$__rate_interval])))`: "a_bucket",
		`rate(x_sum[5m]) / rate(x_count[5m])`:                             "x_sum,x_count",
		`sum(s{state="failed", name='a b'}) or vector(0)`:                 "s",
		`a - on (instance) group_left (name) b > bool 1e3`:                "a,b",
		`time() - process_start_time_seconds`:                             "process_start_time_seconds",
		`rockstream_connector_state{instance=~"$instance"} == 1 unless c`: "rockstream_connector_state,c",
	} {
		if got := strings.Join(promMetrics(expr), ","); got != want {
			t.Errorf("promMetrics(%s) = %s, want %s", expr, got, want)
		}
	}
}

// dashboardExprs returns every PromQL expression of the dashboard: the
// panels' targets and the metrics its variables query.
func dashboardExprs(t *testing.T, dash map[string]any) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				out = append(out, e)
			}
			if d, ok := x["definition"].(string); ok {
				for _, m := range labelValues.FindAllStringSubmatch(d, -1) {
					out = append(out, m[1])
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(dash)
	return out
}

// TestDashboardMetrics parses the Grafana dashboard, checks that every
// panel has a query over the data source, and that every metric its
// expressions read is exported by a live server's /metrics (a durable
// engine with views, a running source and a failing one, the gateway).
func TestDashboardMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardPath, err)
	}
	if dash["uid"] != "rockstream" || dash["title"] != "RockStream" {
		t.Errorf("dashboard uid %v title %v", dash["uid"], dash["title"])
	}
	panels, _ := dash["panels"].([]any)
	titles := map[string]bool{}
	ids := map[float64]bool{}
	for _, p := range panels {
		p := p.(map[string]any)
		titles[p["title"].(string)] = true
		id, _ := p["id"].(float64)
		if ids[id] || id == 0 {
			t.Errorf("panel %q has id %v, missing or taken", p["title"], p["id"])
		}
		ids[id] = true
		if g, ok := p["gridPos"].(map[string]any); !ok || g["x"].(float64)+g["w"].(float64) > 24 || g["h"].(float64) <= 0 {
			t.Errorf("panel %q is placed at %v, outside Grafana's 24 columns", p["title"], p["gridPos"])
		}
		if p["type"] == "row" {
			continue
		}
		targets, _ := p["targets"].([]any)
		if len(targets) == 0 || p["datasource"] == nil || p["gridPos"] == nil {
			t.Errorf("panel %q: %d targets, datasource %v, gridPos %v", p["title"], len(targets), p["datasource"], p["gridPos"])
		}
	}
	// The panels the dashboard is for.
	for _, title := range []string{"Ingest rate", "Epoch commit latency histogram", "Frontier lag", "State size per view",
		"Connector lag", "Connector errors", "Sessions and connections", "Memory"} {
		if !titles[title] {
			t.Errorf("no panel %q", title)
		}
	}

	l := startLive(t, nil)
	l.schema(t)
	l.waitConnectors(t)
	fams := scrape(t, l.hs.URL)
	exported := func(name string) bool {
		if fams[name] != nil {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				if f := fams[base]; f != nil && (f.GetType() == dto.MetricType_HISTOGRAM || (suffix != "_bucket" && f.GetType() == dto.MetricType_SUMMARY)) {
					return true
				}
			}
		}
		return false
	}
	used := map[string]bool{}
	for _, e := range dashboardExprs(t, dash) {
		names := promMetrics(e)
		if len(names) == 0 {
			t.Errorf("expression reads no metric: %s", e)
		}
		for _, n := range names {
			used[n] = true
		}
	}
	var missing, all []string
	for n := range used {
		all = append(all, n)
		if !exported(n) {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard reads metrics /metrics does not export: %v", missing)
	}
	if len(all) < 25 {
		t.Errorf("the dashboard reads only %d metrics: %v", len(all), all)
	}
}
