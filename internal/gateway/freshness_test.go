package gateway

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestCommitEpochReported: after each commit, explicit or autocommit, in
// the simple and the extended protocol, the server sends ParameterStatus
// rockstream_commit_epoch before ReadyForQuery, and only when the number
// changed.
func TestCommitEpochReported(t *testing.T) {
	ts := startServer(t, Config{})
	r := dialRaw(t, ts.addr, nil)
	r.epochs = true
	other := dialRaw(t, ts.addr, nil)
	step := func(q string, want ...string) {
		t.Helper()
		r.send(rawQuery(q))
		compareLogs(t, r.until(), want)
	}
	step("SHOW rockstream.last_commit_epoch", "RowDescription(rockstream.last_commit_epoch:25:-1:-1:0)", `DataRow("0")`, "CommandComplete(SHOW)", "ReadyForQuery(I)")
	step("CREATE TABLE t (k int PRIMARY KEY)", "CommandComplete(CREATE TABLE)", "ParameterStatus(rockstream_commit_epoch=1)", "ReadyForQuery(I)")
	step("INSERT INTO t VALUES (1)", "CommandComplete(INSERT 0 1)", "ParameterStatus(rockstream_commit_epoch=2)", "ReadyForQuery(I)")
	// Unchanged: a read at the same frontier, a write that changed nothing.
	step("SELECT count(*) FROM t", "RowDescription(count:20:8:-1:0)", `DataRow("1")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)")
	step("DELETE FROM t WHERE k = 99", "CommandComplete(DELETE 0)", "ReadyForQuery(I)")
	// A block reports at COMMIT, not before.
	step("BEGIN", "CommandComplete(BEGIN)", "ReadyForQuery(T)")
	step("INSERT INTO t VALUES (2)", "CommandComplete(INSERT 0 1)", "ReadyForQuery(T)")
	step("COMMIT", "CommandComplete(COMMIT)", "ParameterStatus(rockstream_commit_epoch=3)", "ReadyForQuery(I)")
	step("BEGIN; INSERT INTO t VALUES (3); INSERT INTO t VALUES (4); COMMIT",
		"CommandComplete(BEGIN)", "CommandComplete(INSERT 0 1)", "CommandComplete(INSERT 0 1)", "CommandComplete(COMMIT)",
		"ParameterStatus(rockstream_commit_epoch=4)", "ReadyForQuery(I)")
	// Another session's commit moves the frontier: this session's next
	// read commits at it.
	other.send(rawQuery("INSERT INTO t VALUES (10)"))
	other.until()
	step("SELECT count(*) FROM t", "RowDescription(count:20:8:-1:0)", `DataRow("5")`, "CommandComplete(SELECT 1)",
		"ParameterStatus(rockstream_commit_epoch=5)", "ReadyForQuery(I)")
	step("SHOW rockstream.last_commit_epoch", "RowDescription(rockstream.last_commit_epoch:25:-1:-1:0)", `DataRow("5")`, "CommandComplete(SHOW)", "ReadyForQuery(I)")
	step("INSERT INTO t VALUES (1)", "ErrorResponse(ERROR 23505 duplicate key value violates unique constraint \"t_pkey\" detail: Key (k)=(1) already exists.)", "ReadyForQuery(I)")

	// The extended protocol: the autocommit Execute's epoch goes out
	// before the Sync's ReadyForQuery.
	r.send(&pgproto3.Parse{Query: "INSERT INTO t VALUES ($1)"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("6")}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	compareLogs(t, r.until(), []string{"ParseComplete", "BindComplete", "CommandComplete(INSERT 0 1)",
		"ParameterStatus(rockstream_commit_epoch=6)", "ReadyForQuery(I)"})
	r.send(&pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	// The unnamed statement again, with no parameter: an error, no commit.
	trace := r.until()
	if len(trace) != 2 || !strings.HasPrefix(trace[0], "ErrorResponse(") || trace[1] != "ReadyForQuery(I)" {
		t.Errorf("a failed Bind: %v", trace)
	}
	r.send(&pgproto3.Parse{Query: "SELECT count(*) FROM t"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	compareLogs(t, r.until(), []string{"ParseComplete", "BindComplete", `DataRow("6")`, "CommandComplete(SELECT 1)", "ReadyForQuery(I)"})
}

// TestCommitEpochPgx: pgx keeps the reported epoch as a parameter status,
// in the extended and simple protocols, and it is what SHOW gives.
func TestCommitEpochPgx(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		c := ts.connect(t, mode)
		if got := c.PgConn().ParameterStatus(commitEpochParameter); got != "" {
			t.Fatalf("%v: %s before any commit = %q", mode, commitEpochParameter, got)
		}
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS p (k int)"); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := c.Exec(ctx, "INSERT INTO p VALUES ($1)", 1); err != nil {
				t.Fatal(err)
			}
			got := c.PgConn().ParameterStatus(commitEpochParameter)
			var shown string
			if err := c.QueryRow(ctx, "SHOW rockstream.last_commit_epoch").Scan(&shown); err != nil {
				t.Fatal(err)
			}
			if want := ts.eng.Epoch(); got != shown || got != itoa(want) {
				t.Fatalf("%v: reported %q, SHOW %q, frontier %d", mode, got, shown, want)
			}
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO p VALUES (2)"); err != nil {
			t.Fatal(err)
		}
		before := c.PgConn().ParameterStatus(commitEpochParameter)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got := c.PgConn().ParameterStatus(commitEpochParameter); got == before || got != itoa(ts.eng.Epoch()) {
			t.Fatalf("%v: after COMMIT %q (before %q), frontier %d", mode, got, before, ts.eng.Epoch())
		}
		c.Close(ctx)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestMinEpochWaitsForCommit: a read with rockstream.min_epoch ahead of
// the frontier returns once another connection commits that epoch, with
// its rows; statement_timeout bounds the wait with 57014; a cancel
// request and the client's disconnection stop it.
func TestMinEpochWaitsForCommit(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	writer := ts.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := writer.Exec(ctx, "CREATE TABLE m (k int)"); err != nil {
		t.Fatal(err)
	}
	token := writer.PgConn().ParameterStatus(commitEpochParameter)
	reader := ts.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := reader.Exec(ctx, "SET rockstream.min_epoch = "+token+" + 1"); err == nil {
		t.Fatal("SET rockstream.min_epoch took an expression")
	}
	next := itoa(ts.eng.Epoch() + 1)
	if _, err := reader.Exec(ctx, "SET rockstream.min_epoch = "+next); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var n int
	go func() { got <- reader.QueryRow(ctx, "SELECT count(*) FROM m").Scan(&n) }()
	select {
	case err := <-got:
		t.Fatalf("the read returned (%v) before epoch %s committed", err, next)
	case <-time.After(150 * time.Millisecond):
	}
	if _, err := writer.Exec(ctx, "INSERT INTO m VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil || n != 1 {
			t.Fatalf("the read after epoch %s: %d, %v", next, n, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the read still waits after epoch %s committed", next)
	}

	// statement_timeout: 57014 with the epochs in the detail.
	ahead := itoa(ts.eng.Epoch() + 5)
	if _, err := reader.Exec(ctx, "SET rockstream.min_epoch = "+ahead); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Exec(ctx, "SET statement_timeout = '100ms'"); err != nil {
		t.Fatal(err)
	}
	err := reader.QueryRow(ctx, "SELECT count(*) FROM m").Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || pe.Message != "canceling statement due to statement timeout" ||
		pe.Detail != "Waiting for epoch "+ahead+" (rockstream.min_epoch); the commit frontier is at epoch "+itoa(ts.eng.Epoch())+"." {
		t.Fatalf("a timed-out wait: %v (%+v)", err, pe)
	}
	if _, err := reader.Exec(ctx, "SET rockstream.min_epoch = -1"); !errors.As(err, &pe) || pe.Code != "22023" {
		t.Fatalf("SET rockstream.min_epoch = -1: %v", err)
	}

	// A cancel request stops the wait.
	r := dialRaw(t, ts.addr, nil)
	r.send(rawQuery("SET rockstream.min_epoch = " + ahead))
	r.until()
	r.send(rawQuery("SELECT count(*) FROM m"))
	r.silent(100 * time.Millisecond)
	cancel := dialRawNoStartup(t, ts.addr)
	cancel.send(&pgproto3.CancelRequest{ProcessID: r.pid, SecretKey: r.key})
	cancel.until()
	trace := r.until()
	if len(trace) != 2 || !strings.HasPrefix(trace[0], "ErrorResponse(ERROR 57014 canceling statement due to user request detail: Waiting for epoch "+ahead) {
		t.Fatalf("a canceled wait: %v", trace)
	}

	// Disconnecting stops the wait: the session ends.
	gone := dialRaw(t, ts.addr, map[string]string{"application_name": "waits"})
	gone.send(rawQuery("SET rockstream.min_epoch = " + ahead))
	gone.until()
	gone.send(rawQuery("SELECT count(*) FROM m"))
	gone.silent(100 * time.Millisecond)
	_ = gone.nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left int
		if err := writer.QueryRow(ctx, "SELECT count(*) FROM rockstream_catalog.sessions WHERE application_name = 'waits'").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session of a disconnected client still waits")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPsqlListsClusterRelations: psql's \dS lists rockstream_catalog's
// relations, workers and shards among them, and reads them.
func TestPsqlListsClusterRelations(t *testing.T) {
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skip("psql is not installed")
	}
	ts := startServer(t, Config{})
	list := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", `\dtS rockstream_catalog.*`)
	described := psqlAligned(t, "127.0.0.1", ts.port(), "rockstream", `\dS rockstream_catalog.*`)
	for _, rel := range []string{"frontiers", "lateness", "progress", "sessions", "shards", "sinks", "sources", "views", "workers"} {
		if !strings.Contains(list, "rockstream_catalog,"+rel+",table,rockstream\n") {
			t.Errorf("\\dtS rockstream_catalog.* lacks %s:\n%s", rel, list)
		}
		if !strings.Contains(described, `Table "rockstream_catalog.`+rel+`"`) {
			t.Errorf("\\dS rockstream_catalog.* does not describe %s:\n%s", rel, described)
		}
	}
	out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", `\d rockstream_catalog.shards`)
	if !strings.Contains(out, "first_bucket,integer") || !strings.Contains(out, "lag_epochs,bigint") {
		t.Errorf("\\d rockstream_catalog.shards:\n%s", out)
	}
	out = psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", "SELECT sum(bucket_count) FROM rockstream_catalog.workers")
	if out != "sum\n256\n" {
		t.Errorf("the workers' buckets: %q", out)
	}
}
