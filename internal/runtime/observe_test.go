package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/storage"
)

// sqlRunner runs statements on a session and returns their rows as
// formatRows prints them, failing the test on an error.
func sqlRunner(t *testing.T) func(s *Session, sql string) string {
	return func(s *Session, sql string) string {
		t.Helper()
		res, err := s.Exec(context.Background(), sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return formatRows(res)
	}
}

var quietLog = slog.New(slog.DiscardHandler)

const sessionsQuery = "SELECT id, user_name, database, application_name, client_addr, client_port, state, query, query_start IS NOT NULL, backend_start <= query_start FROM rockstream_catalog.sessions ORDER BY id"

// TestSessionsRelation follows sessions through rockstream_catalog.sessions:
// they appear when opened, show who their client is and what they are
// doing, and disappear when closed.
func TestSessionsRelation(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)

	observer := eng.NewSession()
	defer observer.Close()
	client := eng.NewSession()
	client.SetClient(ClientInfo{User: "alice", Database: "shop", ApplicationName: "psql",
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50123}})
	if observer.ID() == client.ID() {
		t.Fatalf("two sessions share id %d", client.ID())
	}

	// The reading session is itself active, running the read; a session
	// that ran nothing yet is idle with no query.
	o, c := strconv.FormatUint(observer.ID(), 10), strconv.FormatUint(client.ID(), 10)
	want := o + "|NULL|NULL||NULL|NULL|active|" + sessionsQuery + "|t|t\n" +
		c + "|alice|shop|psql|127.0.0.1|50123|idle||f|NULL\n"
	if got := run(observer, sessionsQuery); got != want {
		t.Fatalf("sessions:\n%s\nwant:\n%s", got, want)
	}

	run(client, "CREATE TABLE t (a int)")
	run(client, "BEGIN")
	run(client, "INSERT INTO t VALUES (1)")
	run(client, "SET application_name = 'loader'")
	row := func() string {
		for _, line := range strings.Split(run(observer, sessionsQuery), "\n") {
			if strings.HasPrefix(line, c+"|") {
				return line
			}
		}
		return ""
	}
	if got, want := row(), c+"|alice|shop|loader|127.0.0.1|50123|idle in transaction|SET application_name = 'loader'|t|t"; got != want {
		t.Fatalf("session in a block:\n%s\nwant:\n%s", got, want)
	}
	if _, err := client.Exec(ctx, "SELECT 1/0", nil); err == nil {
		t.Fatal("1/0 succeeded")
	}
	if got, want := row(), c+"|alice|shop|loader|127.0.0.1|50123|idle in transaction (aborted)|SELECT 1/0|t|t"; got != want {
		t.Fatalf("session in a failed block:\n%s\nwant:\n%s", got, want)
	}
	run(client, "ROLLBACK")
	// The rollback undid the block's SET, as in PostgreSQL.
	if got, want := row(), c+"|alice|shop|psql|127.0.0.1|50123|idle|ROLLBACK|t|t"; got != want {
		t.Fatalf("session after ROLLBACK:\n%s\nwant:\n%s", got, want)
	}

	client.Close()
	if got := row(); got != "" {
		t.Fatalf("closed session still listed: %s", got)
	}
	if n := eng.Stats().Sessions; n != 1 {
		t.Fatalf("Stats().Sessions = %d after closing one of two, want 1", n)
	}
	// Ids are not reused.
	again := eng.NewSession()
	defer again.Close()
	if again.ID() <= client.ID() {
		t.Fatalf("new session id %d reuses or precedes %d", again.ID(), client.ID())
	}
}

// TestViewsRelation checks rockstream_catalog.views against the views
// themselves through random writes: each view's row_count equals count(*)
// over it, and last_change_epoch is the last epoch that changed it. It
// runs on a durable store and goes on after a reopen.
func TestViewsRelation(t *testing.T) {
	dir := t.TempDir()
	open := func() *Engine {
		st, err := storage.Open(storage.Options{Dir: dir, Logger: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := Open(st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open()
	run := sqlRunner(t)
	s := eng.NewSession()
	run(s, "CREATE TABLE t (k int PRIMARY KEY, g int, v int)")
	run(s, "CREATE TABLE other (x int)")
	// bag keeps duplicates (weights above one), groups aggregates, top
	// keeps only a few rows of many.
	run(s, "CREATE MATERIALIZED VIEW bag AS SELECT g FROM t")
	run(s, "CREATE MATERIALIZED VIEW groups AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g")
	run(s, "CREATE MATERIALIZED VIEW top AS SELECT k, v FROM t ORDER BY v DESC LIMIT 3")
	run(s, "CREATE MATERIALIZED VIEW unrelated AS SELECT x FROM other")
	views := []string{"bag", "groups", "top", "unrelated"}

	lastChange := map[string]string{}
	for _, v := range views {
		lastChange[v] = "NULL" // created empty: no change logged
	}
	contents := func() map[string]string {
		out := map[string]string{}
		for _, v := range views {
			out[v] = run(s, "SELECT * FROM "+v+" ORDER BY 1")
		}
		return out
	}
	check := func(step string) {
		t.Helper()
		got := run(s, "SELECT view_name, row_count, last_change_epoch FROM rockstream_catalog.views ORDER BY view_name")
		var want strings.Builder
		for _, v := range []string{"bag", "groups", "top", "unrelated"} {
			fmt.Fprintf(&want, "%s|%s|%s\n", v, strings.TrimSpace(run(s, "SELECT count(*) FROM "+v)), lastChange[v])
		}
		if got != want.String() {
			t.Fatalf("%s: rockstream_catalog.views:\n%s\nwant:\n%s", step, got, want.String())
		}
		infos, err := eng.Views()
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != len(views) {
			t.Fatalf("%s: Engine.Views() = %v", step, infos)
		}
	}
	check("created")

	rng := rand.New(rand.NewSource(1))
	before := contents()
	for i := 0; i < 60; i++ {
		var stmt string
		switch k := rng.Intn(10); {
		case i%15 == 7:
			eng = reopen(t, eng, s, open)
			s = eng.NewSession()
			check(fmt.Sprintf("reopen at step %d", i))
			continue
		case k < 5:
			stmt = fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d) ON CONFLICT (k) DO UPDATE SET v = excluded.v", rng.Intn(30), rng.Intn(4), rng.Intn(100))
		case k < 7:
			stmt = fmt.Sprintf("UPDATE t SET g = %d WHERE k %% 7 = %d", rng.Intn(4), rng.Intn(7))
		case k < 9:
			stmt = fmt.Sprintf("DELETE FROM t WHERE k %% 5 = %d", rng.Intn(5))
		default:
			stmt = fmt.Sprintf("INSERT INTO other VALUES (%d)", rng.Intn(3))
		}
		run(s, stmt)
		after := contents()
		for _, v := range views {
			if after[v] != before[v] {
				lastChange[v] = strconv.FormatUint(eng.Epoch(), 10)
			}
		}
		before = after
		check(fmt.Sprintf("step %d (%s)", i, stmt))
	}

	// Inside a transaction block the relation shows the block's own
	// state, as the views do.
	run(s, "BEGIN")
	run(s, "DELETE FROM t")
	got := run(s, "SELECT view_name, row_count FROM rockstream_catalog.views WHERE view_name IN ('bag', 'groups', 'top') ORDER BY 1")
	if got != "bag|0\ngroups|0\ntop|0\n" {
		t.Fatalf("views inside a block that emptied t:\n%s", got)
	}
	run(s, "ROLLBACK")
	check("after ROLLBACK")

	// A store written before row counts existed has none: the count is
	// computed, and kept again from the view's next change on.
	eng.mu.RLock()
	id := eng.mu.cat.lookup("bag").id
	eng.mu.RUnlock()
	eng.mu.Lock()
	if err := eng.mu.store.Delete(viewRowsKey(id)); err != nil {
		t.Fatal(err)
	}
	if err := eng.mu.store.Commit(); err != nil {
		t.Fatal(err)
	}
	eng.mu.Unlock()
	check("without a stored count")
	run(s, "INSERT INTO t VALUES (100, 1, 1)")
	lastChange["bag"] = strconv.FormatUint(eng.Epoch(), 10)
	lastChange["groups"] = lastChange["bag"]
	if strings.Contains(run(s, "SELECT k FROM top"), "100") {
		lastChange["top"] = lastChange["bag"]
	}
	check("count stored again")
	if _, ok, _ := eng.mu.store.Get(viewRowsKey(id)); !ok {
		t.Fatal("the row count was not stored again after the view changed")
	}

	// Dropping a view drops its count.
	run(s, "DROP MATERIALIZED VIEW bag")
	if _, ok, _ := eng.mu.store.Get(viewRowsKey(id)); ok {
		t.Fatal("DROP left the view's row count behind")
	}
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}

// reopen closes eng (and its session s) and opens the store again.
func reopen(t *testing.T, eng *Engine, s *Session, open func() *Engine) *Engine {
	t.Helper()
	s.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	return open()
}

// TestFrontierRelation checks rockstream_catalog.frontiers and SHOW
// rockstream.frontier against Engine.Epoch, in memory (not durable) and on
// storage with each durability.
func TestFrontierRelation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) Store
		// durable returns the expected durable_epoch given the committed
		// epoch and the one recovered at open.
		durable func(committed, recovered uint64) string
	}{
		{"memory", func(*testing.T) Store { return NewMemoryStore() },
			func(uint64, uint64) string { return "NULL" }},
		{"sync", func(t *testing.T) Store { return openStore(t, storage.Sync) },
			func(c, _ uint64) string { return strconv.FormatUint(c, 10) }},
		{"relaxed", func(t *testing.T) Store { return openStore(t, storage.Relaxed) },
			func(_, r uint64) string { return strconv.FormatUint(r, 10) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, err := Open(tc.store(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			run := sqlRunner(t)
			s := eng.NewSession()
			defer s.Close()
			check := func() {
				t.Helper()
				e := eng.Epoch()
				want := fmt.Sprintf("0|%d|%s\n", e, tc.durable(e, 0))
				if got := run(s, "SELECT shard, committed_epoch, durable_epoch FROM rockstream_catalog.frontiers"); got != want {
					t.Fatalf("frontiers = %q, want %q", got, want)
				}
				if got := run(s, "SHOW rockstream.frontier"); got != fmt.Sprintf("%d\n", e) {
					t.Fatalf("SHOW rockstream.frontier = %q, want %d", got, e)
				}
			}
			check()
			run(s, "CREATE TABLE t (a int)")
			run(s, "INSERT INTO t VALUES (1)")
			if eng.Epoch() != 2 {
				t.Fatalf("epoch %d after two statements, want 2", eng.Epoch())
			}
			check()
			// A block's writes are not committed until COMMIT.
			run(s, "BEGIN")
			run(s, "INSERT INTO t VALUES (2)")
			check()
			run(s, "COMMIT")
			check()
		})
	}
}

func openStore(t *testing.T, d storage.Durability) Store {
	st, err := storage.Open(storage.Options{Dir: t.TempDir(), Durability: d, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStats checks the engine's counters after a known sequence of
// statements.
func TestStats(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	s := eng.NewSession()
	defer s.Close()
	run(s, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	run(s, "CREATE MATERIALIZED VIEW m AS SELECT sum(v) FROM t")
	run(s, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	run(s, "UPDATE t SET v = 0 WHERE k < 3")
	run(s, "DELETE FROM t WHERE k = 3")
	run(s, "SELECT * FROM m")
	run(s, "BEGIN")
	run(s, "INSERT INTO t VALUES (4, 4)")
	run(s, "COMMIT")
	for _, bad := range []string{"SELECT nope FROM t", "INSERT INTO t VALUES (1, 1)", "SELEC 1"} {
		if _, err := s.Exec(ctx, bad, nil); err == nil {
			t.Fatalf("%s succeeded", bad)
		}
	}
	st := eng.Stats()
	if st.Epoch != eng.Epoch() || st.Epoch != 6 || st.EpochsCommitted != 6 || st.RecoveredEpoch != 0 {
		t.Fatalf("epochs: %+v, engine at %d; want 6 committed since 0", st, eng.Epoch())
	}
	if st.CommitSeconds.Count != 6 || st.CommitSeconds.Cumulative[len(st.CommitSeconds.Cumulative)-1] > 6 || st.CommitSeconds.Sum <= 0 {
		t.Fatalf("commit histogram: %+v", st.CommitSeconds)
	}
	for i := 1; i < len(st.CommitSeconds.Cumulative); i++ {
		if st.CommitSeconds.Cumulative[i] < st.CommitSeconds.Cumulative[i-1] {
			t.Fatalf("commit histogram not cumulative: %v", st.CommitSeconds.Cumulative)
		}
	}
	wantStatements := map[string]uint64{"ddl": 2, "insert": 3, "update": 1, "delete": 1, "select": 2, "transaction": 2, "other": 1}
	if fmt.Sprint(st.Statements) != fmt.Sprint(wantStatements) {
		t.Fatalf("statements = %v, want %v", st.Statements, wantStatements)
	}
	wantErrors := map[string]uint64{"42": 2, "23": 1}
	if fmt.Sprint(st.Errors) != fmt.Sprint(wantErrors) {
		t.Fatalf("errors = %v, want %v", st.Errors, wantErrors)
	}
	wantRows := map[string]uint64{"insert": 4, "update": 2, "delete": 1}
	if fmt.Sprint(st.RowsWritten) != fmt.Sprint(wantRows) {
		t.Fatalf("rows written = %v, want %v", st.RowsWritten, wantRows)
	}
	if st.Durable || st.DurableEpoch != 0 || st.Sessions != 1 {
		t.Fatalf("in-memory engine: %+v", st)
	}
}

func TestStatementKind(t *testing.T) {
	for _, tc := range []struct{ query, tag, want string }{
		{"select 1", "SELECT 1", "select"},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", "INSERT 0 1", "insert"},
		{"  (SELECT 1)", "", "select"},
		{"create materialized view v as select 1", "", "ddl"},
		{"SHOW rockstream.frontier", "SHOW", "setting"},
		{"start transaction", "START TRANSACTION", "transaction"},
		{"EXPLAIN INCREMENTAL v", "", "explain"},
		{"VACUUM", "", "other"},
		{"", "", "other"},
	} {
		if got := statementKind(tc.query, tc.tag); got != tc.want {
			t.Errorf("statementKind(%q, %q) = %q, want %q", tc.query, tc.tag, got, tc.want)
		}
	}
}

// TestStreamingSessionState follows statements that return a stream: the
// session stays active until the stream ends, and COPY FROM STDIN counts
// the rows it inserts.
func TestStreamingSessionState(t *testing.T) {
	ctx := context.Background()
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	observer := eng.NewSession()
	defer observer.Close()
	s := eng.NewSession()
	defer s.Close()
	stateOf := func() string {
		t.Helper()
		return run(observer, fmt.Sprintf("SELECT state, query FROM rockstream_catalog.sessions WHERE id = %d", s.ID()))
	}
	run(s, "CREATE TABLE t (a int)")
	run(s, "CREATE MATERIALIZED VIEW v AS SELECT a FROM t")

	res, err := s.Exec(ctx, "COPY t FROM STDIN", nil)
	if err != nil || res.CopyIn == nil {
		t.Fatalf("COPY FROM STDIN: %v, %+v", err, res)
	}
	if got := stateOf(); got != "active|COPY t FROM STDIN\n" {
		t.Fatalf("during COPY FROM STDIN: %q", got)
	}
	if _, err := s.CopyFrom(ctx, res.CopyIn, strings.NewReader("1\n2\n3\n")); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(); got != "idle|COPY t FROM STDIN\n" {
		t.Fatalf("after COPY FROM STDIN: %q", got)
	}
	res, err = s.Exec(ctx, "COPY t FROM STDIN", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CopyFail("client gave up"); err == nil {
		t.Fatal("CopyFail returned no error")
	}
	if got := stateOf(); got != "idle|COPY t FROM STDIN\n" {
		t.Fatalf("after a failed COPY FROM STDIN: %q", got)
	}

	for _, stmt := range []string{"COPY (SELECT * FROM v) TO STDOUT", "SUBSCRIBE v"} {
		res, err := s.Exec(ctx, stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if got := stateOf(); got != "active|"+stmt+"\n" {
			t.Fatalf("during %s: %q", stmt, got)
		}
		switch {
		case res.CopyOut != nil:
			res.CopyOut.Close()
		case res.Subscription != nil:
			res.Subscription.Close()
		default:
			t.Fatalf("%s returned no stream", stmt)
		}
		if got := stateOf(); got != "idle|"+stmt+"\n" {
			t.Fatalf("after %s: %q", stmt, got)
		}
	}

	st := eng.Stats()
	if st.RowsWritten["copy"] != 3 || st.Statements["copy"] != 3 || st.Statements["subscribe"] != 1 || st.Errors["57"] != 1 {
		t.Fatalf("stats after COPY and SUBSCRIBE: %+v", st)
	}
}
