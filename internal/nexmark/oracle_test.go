package nexmark_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/nexmark"
	"github.com/rockstream/rockstream/internal/oracle"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	eventsFlag = flag.Int("nexmark.events", 8000, "events TestQueriesMatchPostgres streams")
	batchFlag  = flag.Int("nexmark.batch", 600, "events per transaction in the oracle tests")
	seedFlag   = flag.Uint64("nexmark.seed", 1, "seed of the event stream")
	// The tables' declared lateness is far more than the stream's
	// disorder, so RockStream drops only the late bids the test injects.
	latenessFlag = flag.Duration("nexmark.lateness", 30*time.Second, "lateness of the event tables (0: no event time declared, no late bids injected)")
)

// testConfig is the stream the oracle tests use, starting at start: 20
// events per second of event time, so that the stream crosses many 2- and
// 10-second windows and auctions open and expire during it, slightly out
// of order (within the tables' lateness).
func testConfig(start time.Time) nexmark.Config {
	return nexmark.Config{
		Seed:                *seedFlag,
		EventsPerSecond:     20,
		BaseTime:            start,
		OutOfOrderGroupSize: 7,
	}
}

// Start times: just before midnight, so that the per-day statistics (q10,
// q15–q17) see two days; just before 08:00, so that q14 sees two bands of
// hours.
var (
	beforeMidnight = time.Date(2026, 3, 1, 23, 55, 0, 0, time.UTC)
	beforeEight    = time.Date(2026, 3, 2, 7, 58, 0, 0, time.UTC)
)

// run streams events into PostgreSQL and RockStream and compares the
// views.
type run struct {
	t   *testing.T
	ctx context.Context
	ref *oracle.Postgres
	sut *oracle.RockStream
	// views are the views created, compared after every transaction.
	views []string
	gen   *nexmark.Generator
	// step counts the transactions, sent the events sent to both
	// systems, late the bids sent to RockStream alone, behind the
	// watermark.
	step, sent, late int
	// unmaterialized declares RockStream's event tables WITH
	// (materialized = false): they keep no rows (unmaterialized_test.go).
	unmaterialized bool
}

// newRun starts a run of the stream starting at start against a fresh
// PostgreSQL database; the caller sets r.sut.
func newRun(t *testing.T, ctx context.Context, start time.Time) *run {
	pgtest.Require(t)
	ref, err := oracle.ConnectPostgres(ctx, "postgres", pgtest.NewDatabase(t, "nexmark"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	return &run{t: t, ctx: ctx, ref: ref, gen: nexmark.NewGenerator(testConfig(start))}
}

// exec runs a statement on both systems; both must succeed.
func (r *run) exec(ref, sut string) {
	r.t.Helper()
	if _, err := r.ref.Exec(r.ctx, ref); err != nil {
		r.t.Fatalf("postgres: %s: %v", short(ref), err)
	}
	if _, err := r.sut.Exec(r.ctx, sut); err != nil {
		r.t.Fatalf("rockstream: %s: %v", short(sut), err)
	}
}

// setUp creates the tables, fills the side input and creates every
// supported query's view; unsupported queries must fail with 0A000 naming
// their construct.
func (r *run) setUp() {
	t := r.t
	for _, tbl := range nexmark.Tables {
		sut := tbl.CreateTable(*latenessFlag, true)
		if r.unmaterialized {
			sut = tbl.CreateUnmaterialized(*latenessFlag)
		}
		r.exec(tbl.CreateTable(0, false), sut)
	}
	r.exec(nexmark.SideInputTable, nexmark.SideInputTable)
	r.exec(nexmark.SideInputRows(), nexmark.SideInputRows())
	for _, q := range nexmark.Queries() {
		if q.Unsupported != "" {
			_, err := r.sut.Exec(r.ctx, q.CreateView())
			var e *oracle.Error
			if !errors.As(err, &e) || e.SQLState != "0A000" || !strings.Contains(e.Message, q.Construct) {
				t.Errorf("%s: want SQLSTATE 0A000 naming %s, got %v", q.Name, q.Construct, err)
			}
			continue
		}
		r.exec(q.CreateViewPostgres(), q.CreateView())
		r.views = append(r.views, q.Name)
	}
}

// stream sends events until r.sent reaches total: transactions of
// -nexmark.batch events and, between them, now and then, a few events on
// their own, each its own transaction; a bid from long ago, behind the
// bid table's watermark (twice the lateness back), which RockStream drops
// and PostgreSQL never sees; a change to the side input (q13 is a join,
// not a lookup as of the bid's time, so bids already joined see the new
// values). The views are compared after every transaction and after the
// extras.
func (r *run) stream(total int) {
	for r.sent < total && !r.t.Failed() {
		r.step++
		n := min(*batchFlag, total-r.sent)
		r.exec("BEGIN", "BEGIN")
		for _, ins := range nexmark.Inserts(r.gen.NextN(n)) {
			r.exec(ins, ins)
		}
		r.exec("COMMIT", "COMMIT")
		r.sent += n
		r.compare(fmt.Sprintf("after transaction %d (%d events)", r.step, r.sent))

		var extras []string
		if r.step%3 == 0 {
			for range 3 {
				for _, ins := range nexmark.Inserts(r.gen.NextN(1)) {
					r.exec(ins, ins)
				}
				r.sent++
			}
			extras = append(extras, "single-event inserts")
		}
		back := 2 * int(latenessFlag.Seconds()) * r.gen.Config().EventsPerSecond
		if r.step%5 == 2 && *latenessFlag > 0 && r.sent >= back {
			n := uint64(r.sent - back)
			n = n - n%50 + 10 // a bid's position
			late := nexmark.Inserts([]nexmark.Event{r.gen.Event(n)})[0]
			res, err := r.sut.Exec(r.ctx, late)
			if err != nil || res.Tag != "INSERT 0 0" {
				r.t.Fatalf("late bid: got %v, %v; want it dropped (INSERT 0 0)", res, err)
			}
			r.late++
			extras = append(extras, "a late bid")
		}
		if r.step == 4 {
			upd := "UPDATE side_input SET value = 'changed ' || value WHERE key % 10 = 0"
			r.exec(upd, upd)
			extras = append(extras, "updating the side input")
		}
		if len(extras) > 0 {
			r.compare(fmt.Sprintf("after %s (%d events)", strings.Join(extras, ", "), r.sent))
		}
	}
}

// compare reads every view on both systems and reports each difference.
func (r *run) compare(when string) {
	r.t.Helper()
	for _, v := range r.views {
		q := "SELECT * FROM " + v
		want, err := r.ref.Observe(r.ctx, q)
		if err != nil {
			r.t.Fatalf("postgres: %s: %v", q, err)
		}
		got, err := r.sut.Observe(r.ctx, q)
		if err != nil {
			r.t.Fatalf("%s: rockstream: %s: %v", when, q, err)
		}
		if fmt.Sprint(want.Columns) != fmt.Sprint(got.Columns) {
			r.t.Errorf("%s: view %s: columns differ: postgres %v, rockstream %v", when, v, want.Columns, got.Columns)
			continue
		}
		if d := oracle.DiffMultisets(want.Rows, got.Rows); !d.Empty() {
			r.t.Errorf("%s: view %s differs from PostgreSQL (%d rows):\n%s", when, v, len(want.Rows), d.Format("postgres", "rockstream"))
		}
	}
}

// checkLateRows checks that the late rows dropped are exactly the bids
// injected: the stream's own disorder is within the lateness.
func (r *run) checkLateRows() {
	res, err := r.sut.Observe(r.ctx, "SELECT table_name, late_rows_dropped FROM rockstream_catalog.lateness ORDER BY table_name")
	if err != nil {
		r.t.Fatal(err)
	}
	want := fmt.Sprintf("[[auction 0] [bid %d] [person 0]]", r.late)
	if *latenessFlag == 0 {
		want = "[]"
	}
	if got := fmt.Sprint(derefRows(res.Rows)); got != want {
		r.t.Errorf("late rows dropped: %s, want %s", got, want)
	}
}

func short(sql string) string {
	if len(sql) > 120 {
		return sql[:117] + "..."
	}
	return sql
}

func derefRows(rows [][]*string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		for _, v := range r {
			if v == nil {
				out[i] = append(out[i], "NULL")
			} else {
				out[i] = append(out[i], *v)
			}
		}
	}
	return out
}

// TestQueriesMatchPostgres maintains every supported query as a
// materialized view in an in-memory instance while -nexmark.events events
// are streamed (see run.stream), compares every view with PostgreSQL's
// plain view of the same query after each transaction, then runs the
// queries ad hoc over the final tables and checks that no view is empty.
// It runs once for each of oracle.TestWorkers' worker counts.
func TestQueriesMatchPostgres(t *testing.T) {
	t.Parallel()
	for _, n := range oracle.TestWorkers() {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) { testQueriesMatchPostgres(t, n) })
	}
}

func testQueriesMatchPostgres(t *testing.T, workers int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r := newRun(t, ctx, beforeMidnight)
	sut, err := oracle.OpenRockStream(workers)
	if err != nil {
		t.Fatal(err)
	}
	defer sut.Close()
	r.sut = sut
	r.setUp()
	r.stream(*eventsFlag)
	if t.Failed() {
		return
	}
	r.checkLateRows()

	// The same queries run once over the final tables (RockStream's batch
	// evaluation, the circuit over the whole input as one delta).
	for _, q := range nexmark.Queries() {
		if q.Unsupported != "" {
			continue
		}
		want, err := r.ref.Observe(ctx, q.Postgres)
		if err != nil {
			t.Fatalf("postgres: %s: %v", q.Name, err)
		}
		got, err := sut.Observe(ctx, q.SQL)
		if err != nil {
			t.Fatalf("rockstream: %s as a query: %v", q.Name, err)
		}
		if d := oracle.DiffMultisets(want.Rows, got.Rows); !d.Empty() {
			t.Errorf("%s as a query differs from PostgreSQL:\n%s", q.Name, d.Format("postgres", "rockstream"))
		}
	}
	// Every view must have rows: a view that stays empty tests nothing.
	for _, v := range r.views {
		res, err := sut.Observe(ctx, "SELECT count(*) FROM "+v)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s rows", v, *res.Rows[0][0])
		if *res.Rows[0][0] == "0" {
			t.Errorf("view %s is empty after the stream", v)
		}
	}
}

// TestQueriesSurviveRestart streams into a durable instance, closes it
// part way, and goes on after reopening it: the views' state (windowed
// aggregates with their released windows, top-k and window-function
// arrangements, joins) and the tables' watermarks come back from storage,
// and every view keeps equalling PostgreSQL's. The instance runs on one
// worker before the restart and on three after it: the stored state does
// not depend on the number.
func TestQueriesSurviveRestart(t *testing.T) { checkSurvivesRestart(t, false) }

// checkSurvivesRestart is TestQueriesSurviveRestart, with unmaterialized
// event tables when unmaterialized.
func checkSurvivesRestart(t *testing.T, unmaterialized bool) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r := newRun(t, ctx, beforeEight)
	r.unmaterialized = unmaterialized
	dir := t.TempDir()
	workers := 1
	open := func() {
		sut, err := oracle.OpenRockStreamAt(dir, workers)
		workers = 3
		if err != nil {
			t.Fatal(err)
		}
		r.sut = sut
	}
	open()
	r.setUp()
	const events = 3000
	r.stream(events / 2)
	if err := r.sut.Close(); err != nil {
		t.Fatal(err)
	}
	open()
	defer r.sut.Close()
	r.compare("after reopening")
	r.stream(events)
	r.checkLateRows()
}
