package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

var epochRows = flag.Int("epoch-rows", 100_000, "rows of each large change of TestEpochChangesUnderMemoryLimit")

// TestEpochChangesUnderMemoryLimit: against a server with --memory-limit
// 208MB, the large changes an epoch evaluates — an INSERT ... SELECT into
// a table read by views, a materialized view's backfill over the table, a
// COPY of many rows in one transaction block, and a small insert whose
// delta explodes through a join — each complete, and a change too large
// for the limit fails with 53200 naming it and leaves nothing behind;
// meanwhile another session is answered, the server's resident set stays
// under the limit, and afterwards every view equals PostgreSQL's answer
// over the same data.
//
// The limit covers the whole resident set, which includes the binary's
// file-backed pages: about 60MB of it here since the cluster roles (etcd,
// gRPC) are linked in, 9MB more than before, which left the COPY's
// commit (whose peak is about 120MB of anonymous memory) no room under a
// 192MB limit.
func TestEpochChangesUnderMemoryLimit(t *testing.T) {
	const limit = 208 << 20
	n := *epochRows
	oracle, err := pgx.Connect(context.Background(), pgtest.NewDatabase(t, "epochmem"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { oracle.Close(context.Background()) })
	s := startServer(t, "--storage", t.TempDir(), "--cache-size", "8MB", "--memory-limit", "208MB")
	rss := watchRSS(t, s.cmd.Process.Pid)
	conn := connectTo(t, s)
	ctx := context.Background()
	both := func(q string) {
		t.Helper()
		start := time.Now()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		took := time.Since(start)
		if _, err := oracle.Exec(ctx, strings.Replace(q, "MATERIALIZED VIEW", "VIEW", 1)); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		t.Logf("%.70s: %v, peak RSS %dMB", q, took.Round(time.Millisecond), rss.peak.Load()>>20)
	}
	for _, q := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, g int, v int)",
		"CREATE TABLE d (g int PRIMARY KEY, name text)",
		"CREATE TABLE e (k int PRIMARY KEY, g int)",
		"CREATE TABLE small (id int, s text)",
		"INSERT INTO small VALUES (1, 'served')",
		"INSERT INTO d SELECT i, 'n' || i FROM generate_series(0, 999) i",
		"CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) c, sum(v) s FROM t GROUP BY g",
		"CREATE MATERIALIZED VIEW by_name AS SELECT d.name, count(*) c, max(t.v) m FROM t JOIN d ON t.g = d.g GROUP BY d.name",
		"CREATE MATERIALIZED VIEW fanout AS SELECT t.v, count(*) c, sum(e.k) s FROM t JOIN e ON t.g = e.g GROUP BY t.v",
	} {
		both(q)
	}
	stop := bystander(t, s, "SELECT s FROM small WHERE id = 1", "served")

	// A change too large for the limit: stopped with 53200, and nothing
	// of it is visible (the oracle, which never ran it, says so below).
	start := time.Now()
	_, err = conn.Exec(ctx, "INSERT INTO t SELECT i, i % 1000, i % 97 FROM generate_series(10000001, 11000000) i")
	wantOutOfMemory(t, "a 1M-row INSERT ... SELECT", err)
	stoppedPeak := rss.peak.Load()
	t.Logf("1M-row INSERT ... SELECT stopped after %v, peak RSS %dMB", time.Since(start).Round(time.Millisecond), stoppedPeak>>20)
	// Its query's rows are built whole before they are charged, so the
	// stop lags behind them: on a loaded machine the resident set passes
	// the limit by up to a tenth before the statement lets go (known,
	// docs/operations.md "Large changes"). The changes that complete
	// below must stay under the limit itself.
	if stoppedPeak >= limit+limit/6 {
		t.Errorf("the stopped 1M-row INSERT ... SELECT peaked at %dMB, past the %dMB limit by more than a sixth", stoppedPeak>>20, limit>>20)
	}
	for i := 0; i < 100 && processRSS(s.cmd.Process.Pid) >= limit*8/10; i++ {
		time.Sleep(50 * time.Millisecond) // the stopped statement's memory going back
	}
	rss.peak.Store(0)

	// An INSERT ... SELECT into a table three views read.
	both(fmt.Sprintf("INSERT INTO t SELECT i, i %% 1000, i %% 97 FROM generate_series(1, %d) i", n))
	// A backfill over the whole table.
	both("CREATE MATERIALIZED VIEW by_v AS SELECT v, count(*) c, sum(g) s, min(id) lo FROM t GROUP BY v")
	// A COPY of n rows in one transaction block, in two statements.
	var copyText strings.Builder
	for i := n + 1; i <= 2*n; i++ {
		fmt.Fprintf(&copyText, "%d\t%d\t%d\n", i, i%1000, i%89)
	}
	half := strings.Index(copyText.String()[copyText.Len()/2:], "\n") + copyText.Len()/2 + 1
	start = time.Now()
	for _, c := range []*pgx.Conn{conn, oracle} {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{copyText.String()[:half], copyText.String()[half:]} {
			if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(part), "COPY t FROM STDIN"); err != nil {
				t.Fatalf("COPY in a block: %v", err)
			}
		}
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatalf("COMMIT of the COPY: %v", err)
		}
		if c == conn {
			t.Logf("COPY of %d rows in a block: %v, peak RSS %dMB", n, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20)
		}
	}
	// 200 rows into e, each matching 2n/1000 rows of t: a join delta of
	// 0.4n rows.
	both("INSERT INTO e SELECT i, i % 1000 FROM generate_series(1, 200) i")
	// 2,000 more, a join delta of 4n rows, which the join emits at once:
	// it completes or fails with 53200, and then leaves nothing behind.
	q := "INSERT INTO e SELECT i, i % 1000 FROM generate_series(201, 2200) i"
	start = time.Now()
	if _, err := conn.Exec(ctx, q); err != nil {
		wantOutOfMemory(t, "a join delta of 4n rows", err)
		t.Logf("%s: stopped after %v, peak RSS %dMB", q, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20)
	} else {
		t.Logf("%s: %v, peak RSS %dMB", q, time.Since(start).Round(time.Millisecond), rss.peak.Load()>>20)
		if _, err := oracle.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	if served := stop(); served == 0 {
		t.Error("the other session was never answered during the large changes")
	}
	for _, q := range []string{
		"SELECT count(*), sum(v) FROM t",
		"SELECT count(*), sum(k) FROM e",
		"SELECT g, c, s FROM by_g ORDER BY g",
		"SELECT name, c, m FROM by_name ORDER BY name",
		"SELECT v, c, s FROM fanout ORDER BY v",
		"SELECT v, c, s, lo FROM by_v ORDER BY v",
	} {
		if got, want := rowsText(t, conn, q), rowsText(t, oracle, q); got != want {
			t.Errorf("%s: RockStream and PostgreSQL differ:\n%.500s\nwant\n%.500s", q, got, want)
		}
	}
	rss.end()
	if p := rss.peak.Load(); p >= limit {
		t.Errorf("peak RSS %dMB reached the %dMB limit", p>>20, limit>>20)
	}
}

// rowsText returns q's rows as text, one line a row, columns split by |.
func rowsText(t *testing.T, c *pgx.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		vals := rows.RawValues()
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('|')
			}
			b.Write(v)
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return b.String()
}
