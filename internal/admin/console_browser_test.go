package admin

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium. Without one
// the test fails in CI (CI=true, or ROCKSTREAM_REQUIRE_CLIENTS=1, which
// .ci/run sets after installing Debian's chromium) and is skipped
// elsewhere, saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
		t.Fatal("no chromium in PATH: the console's browser tests need it (apt-get install -y chromium)")
	}
	t.Skip("no chromium in PATH: install it (apt-get install -y chromium) to run the console's browser tests")
	return ""
}

// browse loads url in headless Chromium, lets the page run for budget of
// virtual time (its polls included), and returns the DOM then; with
// screenshot set it writes a PNG of the page there instead.
func browse(t *testing.T, bin, url string, budget time.Duration, screenshot string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(),
		"--virtual-time-budget=" + strconv.Itoa(int(budget.Milliseconds()))}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root in its sandbox
	}
	if screenshot != "" {
		args = append(args, "--window-size=1400,1000", "--screenshot="+screenshot)
	} else {
		args = append(args, "--dump-dom")
	}
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// cell returns the text of the cells of the row of table id whose
// data attribute attr is value, tags removed.
func cells(t *testing.T, dom, attr, value string) []string {
	t.Helper()
	re := regexp.MustCompile(`<tr ` + attr + `="` + regexp.QuoteMeta(value) + `">(.*?)</tr>`)
	m := re.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no row with %s=%q in the page:\n%s", attr, value, dom)
	}
	var out []string
	for _, c := range regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, c[1])
	}
	return out
}

// TestConsoleInChromium loads the console in headless Chromium and
// checks what it shows against the server: the catalog's names and
// lineage, the circuit of a view with its operators and their state, the
// connectors with their lag and errors, the sessions. While the page is
// open, after its first poll of the circuit, the test inserts rows: the
// page's later polls show the new counts and a non-zero rate, which is
// the console updating itself. A screenshot of the page must be a PNG
// of the window's size that is not blank.
func TestConsoleInChromium(t *testing.T) {
	bin := chromium(t)
	var l *live
	var polls atomic.Int64
	var inserted atomic.Bool
	l = startLive(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if strings.HasPrefix(r.URL.Path, "/api/views/") && polls.Add(1) == 1 && inserted.CompareAndSwap(false, true) {
				var values []string
				for i := 2000; i < 2040; i++ {
					values = append(values, fmt.Sprintf("(%d, %d, 50)", i, 100+i%4))
				}
				if _, err := l.s.Exec(r.Context(), "INSERT INTO orders VALUES "+strings.Join(values, ", "), nil); err != nil {
					t.Errorf("insert while the page is open: %v", err)
				}
			}
		})
	})
	l.schema(t)
	l.waitConnectors(t)

	// Polls at 0 and 2 s of virtual time: the rows arrive between them.
	dom := browse(t, bin, l.hs.URL+"/#view=spend", 3*time.Second, "")
	if !inserted.Load() || polls.Load() < 2 {
		t.Fatalf("the page polled the circuit %d times", polls.Load())
	}
	if !strings.Contains(dom, `<dd id="status">ok</dd>`) || !strings.Contains(dom, fmt.Sprintf(`<dd id="epoch">%d</dd>`, l.eng.Epoch())) {
		t.Errorf("the header does not show status ok at epoch %d:\n%s", l.eng.Epoch(), dom)
	}
	for name, want := range map[string]string{
		"orders":       "orders|table|–||spend|orders_feed",
		"customers":    "customers|table|–||named_spend|customers_feed",
		"spend":        "spend|materialized view|10|orders|named_spend|",
		"named_spend":  "named_spend|view|–|customers, spend|big_spenders|",
		"big_spenders": "big_spenders|materialized view|",
	} {
		if got := strings.Join(cells(t, dom, "data-relation", name), "|"); !strings.HasPrefix(got, want) {
			t.Errorf("catalog row %s: %s, want %s...", name, got, want)
		}
	}
	if got := cells(t, dom, "data-relation", "spend"); got[6] != strconv.FormatUint(l.eng.Epoch(), 10) ||
		!regexp.MustCompile(`^epoch \d+, (just now|\d+ s ago)$`).MatchString(got[7]) {
		t.Errorf("spend's frontier and last change: %q, %q; want %d and a recent epoch", got[6], got[7], l.eng.Epoch())
	}

	// The circuit: the graph's boxes and the operator table.
	if !strings.Contains(dom, `aria-label="circuit of spend"`) {
		t.Fatalf("no circuit graph of spend:\n%s", dom)
	}
	vc, err := l.eng.ViewCircuit("spend")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range vc.Operators {
		if !strings.Contains(dom, fmt.Sprintf(`<g data-operator="%d">`, op.ID)) {
			t.Errorf("no box for operator %d", op.ID)
		}
		row := cells(t, dom, "data-operator", strconv.Itoa(op.ID))
		first, _, _ := strings.Cut(op.Explain, "\n")
		if row[1] != htmlEscape(first) || row[2] != strconv.FormatInt(op.State.Keys, 10) || row[4] != strconv.FormatUint(op.Rows, 10) {
			t.Errorf("operator %d row %v, want %q with %d keys and %d rows", op.ID, row, first, op.State.Keys, op.Rows)
		}
		if op.Kind == "scan" {
			// 60 rows before the page opened, 40 while it was open.
			if op.Rows != 100 {
				t.Errorf("scan emitted %d rows, want 100", op.Rows)
			}
			if r, err := strconv.ParseFloat(row[5], 64); err != nil || r <= 0 {
				t.Errorf("scan's rows/s %q after 40 rows arrived between two polls", row[5])
			}
		}
	}
	if !strings.Contains(dom, "10 rows · consistent at epoch ") {
		t.Errorf("the circuit's summary does not show the 10 rows after the insert:\n%s", dom)
	}

	steady := strings.Join(cells(t, dom, "data-connector", "orders_feed"), "|")
	if !strings.HasPrefix(steady, `orders_feed|source|steady|orders|running|42|`) || !strings.HasSuffix(steady, "|7|1|0|") {
		t.Errorf("orders_feed row: %s", steady)
	}
	broken := cells(t, dom, "data-connector", "customers_feed")
	if broken[4] != "failed" || broken[10] != "the upstream is unreachable" {
		t.Errorf("customers_feed row: %v", broken)
	}
	if n, err := strconv.Atoi(broken[9]); err != nil || n < 2 {
		t.Errorf("customers_feed failures: %q", broken[9])
	}
	session := cells(t, dom, "data-session", strconv.FormatUint(l.s.ID(), 10))
	if session[1] != "console_tester" || session[3] != "console-test" || session[5] != "idle" {
		t.Errorf("session row: %v", session)
	}

	shot := filepath.Join(t.TempDir(), "console.png")
	browse(t, bin, l.hs.URL+"/#view=big_spenders", 3*time.Second, shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 1000 {
		t.Errorf("screenshot is %v, want 1400x1000", b)
	}
	colors := map[[3]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 4 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(colors) < 20 {
		t.Errorf("the screenshot has %d colours: the page did not render", len(colors))
	}
}

// htmlEscape escapes text as the DOM serializes it inside an element.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
