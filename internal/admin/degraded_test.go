package admin

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestHealthWhileStorageFails serves an engine whose storage first runs
// out of space and then has its log writes fail: /health answers 503
// "degraded" with the problem and rockstream_storage_degraded is 1 while
// it lasts; /ready answers 503 with a JSON body naming the reason, when
// it began and whether reads are served, and /ready/reads stays 200 while
// the disk is full and while the stopped storage serves reads (as here:
// the device fails the recovery's probe too, so the stopped instance is
// kept) at the last acknowledged commit, which a read then sees;
// once the condition clears, writes succeed without a restart, /health
// and /ready are 200 again (the disk's space is measured again by the
// probe itself, with no write needed) and
// rockstream_storage_recoveries_total counts the recovery.
func TestHealthWhileStorageFails(t *testing.T) {
	mem := vfs.NewMem()
	setAvail := func(avail uint64) {
		mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: avail, TotalBytes: 4 << 30, UsedBytes: 4<<30 - avail})
		time.Sleep(300 * time.Millisecond) // past the storage's trust in its last measurement
	}
	setAvail(2 << 30)
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpCreate:
			if !strings.HasSuffix(op.Path, ".log") && !strings.Contains(op.Path, "PROBE") {
				return nil
			}
			return errorfs.ErrInjected
		}
		return nil
	})}
	st, err := storage.Open(storage.Options{Dir: "db", FS: errorfs.Wrap(mem, fault), EpochKey: runtime.FrontierKey(),
		ReserveBytes: 64 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := runtime.Open(st, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := New(Config{Version: "dev", StorageDir: "db"})
	srv.SetEngine(eng)
	srv.SetReady(true)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	s := eng.NewSession()
	defer s.Close()
	exec := func(q string) error {
		_, err := s.Exec(context.Background(), q, nil)
		return err
	}
	if err := exec("CREATE TABLE t (k int)"); err != nil {
		t.Fatal(err)
	}
	expect := func(when string, degraded bool, problem string, recoveries float64, reads string) {
		t.Helper()
		code, h := health(t, hs.URL)
		fams := scrape(t, hs.URL)
		d, _ := value(fams, "rockstream_storage_degraded")
		r, _ := value(fams, "rockstream_storage_recoveries_total")
		rc, body := get(t, hs.URL+"/ready")
		rrc, _ := get(t, hs.URL+"/ready/reads")
		if !degraded {
			if rc != 200 || body != "ready\n" || rrc != 200 {
				t.Fatalf("%s: /ready %d %q, /ready/reads %d", when, rc, body, rrc)
			}
		} else {
			var nr map[string]string
			if err := json.Unmarshal([]byte(body), &nr); err != nil || rc != 503 {
				t.Fatalf("%s: /ready %d %q (%v)", when, rc, body, err)
			}
			if nr["status"] != "degraded" || nr["reads"] != reads || nr["since"] == "" ||
				!strings.HasPrefix(nr["reason"], "storage degraded: ") || !strings.Contains(nr["reason"], " since "+nr["since"]) ||
				!strings.Contains(nr["reason"], problem) {
				t.Fatalf("%s: /ready body %q", when, body)
			}
			if want := map[string]int{"served": 200, "refused": 503}[reads]; rrc != want {
				t.Fatalf("%s: /ready/reads %d, want %d", when, rrc, want)
			}
			t.Logf("%s: /ready: %s", when, nr["reason"])
		}
		if !degraded {
			if code != 200 || h["status"] != "ok" || d != 0 || r != recoveries {
				t.Fatalf("%s: /health %d %v, degraded %v, recoveries %v", when, code, h, d, r)
			}
			return
		}
		p, _ := h["problem"].(string)
		if code != 503 || h["status"] != "degraded" || !strings.Contains(p, problem) || d != 1 || r != recoveries || h["reads"] != reads {
			t.Fatalf("%s: /health %d %v, degraded %v, recoveries %v", when, code, h, d, r)
		}
		t.Logf("%s: %s", when, p)
	}
	expect("at first", false, "", 0, "")

	setAvail(10 << 20)
	if err := exec("INSERT INTO t VALUES (1)"); err == nil {
		t.Fatal("insert on a full disk succeeded")
	}
	expect("disk full", true, "no space left on device", 0, "served")
	if _, err := s.Exec(context.Background(), "SELECT count(*) FROM t", nil); err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	setAvail(2 << 30)
	expect("space freed, no write yet", false, "", 0, "")
	if err := exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	fault.On()
	if err := exec("INSERT INTO t VALUES (2)"); err == nil {
		t.Fatal("insert on a failing log succeeded")
	}
	expect("log failing", true, "injected error", 0, "served")
	// Reads are served at the last acknowledged commit: the failed
	// insert's row is not seen.
	res, err := s.Exec(context.Background(), "SELECT k FROM t ORDER BY k", nil)
	if err != nil {
		t.Fatalf("read while the log fails: %v", err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("rows while the log fails: %v", res.Rows)
	}
	fault.Off()
	deadline := time.Now().Add(20 * time.Second)
	for exec("INSERT INTO t VALUES (3)") != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes did not resume after the fault cleared")
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect("recovered", false, "", 1, "")
	res, err = s.Exec(context.Background(), "SELECT k FROM t ORDER BY k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("rows after recovery: %v", res.Rows)
	}
}
