package lake

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/storage"
)

// summarize renders the error codes, command tags and statuses of an
// answer, the parts a cancel decides.
func summarize(msgs []pgproto3.BackendMessage) string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			out = append(out, "error "+m.Code+" "+m.Message)
		case *pgproto3.CommandComplete:
			out = append(out, string(m.CommandTag))
		case *pgproto3.CopyOutResponse:
			out = append(out, "copy out")
		case *pgproto3.ReadyForQuery:
			out = append(out, "ready "+string(m.TxStatus))
		}
	}
	return strings.Join(out, "; ")
}

// holdScans makes every scan of the test wait at its first cancel check
// until its session is cancelled or release is closed; started receives
// one value per held scan.
func holdScans(t *testing.T) (started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}, 16), make(chan struct{})
	scanCheckHook = func(done <-chan struct{}) {
		if done == nil {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		started <- struct{}{}
		select {
		case <-done:
		case <-release:
		case <-time.After(30 * time.Second):
		}
	}
	t.Cleanup(func() { scanCheckHook = nil })
	return started, release
}

// TestCancelScan cancels scans held at their first interruption point:
// binary COPY TO and a text-protocol SELECT stop with 57014, an
// implicit transaction is rolled back and a block aborted, and the
// session stays usable; a wrong secret lets the scan finish.
func TestCancelScan(t *testing.T) {
	_, addr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed})
	c := dialWire(t, addr, "lake")
	defer c.close()
	started, release := holdScans(t)
	run := func(sql string, cancel, wrong bool) string {
		t.Helper()
		c.fe.Send(&pgproto3.Query{String: sql})
		if err := c.fe.Flush(); err != nil {
			t.Fatal(err)
		}
		if cancel {
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the scan never reached its cancel check", sql)
			}
			c.cancel(t, wrong)
			if wrong {
				time.Sleep(100 * time.Millisecond)
				release <- struct{}{}
			}
		}
		msgs, err := c.until(t)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return summarize(msgs)
	}
	copyOut := `COPY (SELECT "key", "value" FROM "public"."ducklake_metadata") TO STDOUT (FORMAT "binary")`
	steps := []struct {
		sql           string
		cancel, wrong bool
		want          string
	}{
		{copyOut, true, false, "error 57014 canceling statement due to user request; ready I"},
		{copyOut, true, true, "copy out; COPY 4; ready I"},
		{"BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ", false, false, "BEGIN; ready T"},
		{`SELECT "key", "value" FROM "public"."ducklake_metadata" WHERE "key" = 'version'`, true, false,
			"error 57014 canceling statement due to user request; ready E"},
		{"ROLLBACK", false, false, "ROLLBACK; ready I"},
		{"SELECT 1", false, false, "SELECT 1; ready I"},
		{copyOut, true, true, "copy out; COPY 4; ready I"},
	}
	for _, s := range steps {
		if got := run(s.sql, s.cancel, s.wrong); got != s.want {
			t.Errorf("%s (cancel %v, wrong secret %v):\n got  %s\n want %s", s.sql, s.cancel, s.wrong, got, s.want)
		}
	}
}

// TestCancelCopyIn cancels a COPY FROM STDIN between its CopyInResponse
// and its data, on RockLake and on PostgreSQL: both fail the COPY with
// 57014 when the data arrives, add nothing, ignore the CopyDone that
// follows and stay usable.
func TestCancelCopyIn(t *testing.T) {
	dsn := pgtest.NewDatabase(t, "lake")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, lakeAddr := serveLake(t, Config{Dir: t.TempDir(), Durability: storage.Relaxed, NoBootstrap: true})
	answers := map[string]string{}
	for _, target := range []struct{ name, addr, db string }{
		{"rocklake", lakeAddr, "lake"},
		{"postgres", u.Host, strings.TrimPrefix(u.Path, "/")},
	} {
		c := dialWire(t, target.addr, target.db)
		var log []string
		query := func(sql string) {
			c.fe.Send(&pgproto3.Query{String: sql})
			msgs, err := c.until(t)
			if err != nil {
				t.Fatalf("%s: %s: %v", target.name, sql, err)
			}
			log = append(log, summarize(msgs))
		}
		query(`CREATE TABLE "public".t(a BIGINT, b VARCHAR)`)
		c.fe.Send(&pgproto3.Query{String: `COPY "public"."t" ("a", "b") FROM STDIN (FORMAT TEXT, NULL '\b')`})
		if err := c.fe.Flush(); err != nil {
			t.Fatal(err)
		}
		m, err := c.fe.Receive()
		if _, ok := m.(*pgproto3.CopyInResponse); err != nil || !ok {
			t.Fatalf("%s: COPY FROM STDIN answered %T, %v", target.name, m, err)
		}
		c.cancel(t, false)
		time.Sleep(150 * time.Millisecond)
		c.fe.Send(&pgproto3.CopyData{Data: []byte("1\tx\n2\ty\n")})
		c.fe.Send(&pgproto3.CopyDone{})
		msgs, err := c.until(t)
		if err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		log = append(log, summarize(msgs))
		query(`SELECT "a" FROM "public"."t"`)
		query("SELECT 1")
		c.close()
		answers[target.name] = strings.Join(log, "\n")
	}
	if answers["rocklake"] != answers["postgres"] {
		t.Errorf("RockLake and PostgreSQL differ:\nrocklake:\n%s\npostgres:\n%s", answers["rocklake"], answers["postgres"])
	}
	if !strings.Contains(answers["rocklake"], "error 57014") {
		t.Errorf("the COPY was not cancelled:\n%s", answers["rocklake"])
	}
}
