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
	eventsFlag = flag.Int("nexmark.events", 10000, "events TestQueriesMatchPostgres streams")
	batchFlag  = flag.Int("nexmark.batch", 600, "events per transaction in TestQueriesMatchPostgres")
	seedFlag   = flag.Uint64("nexmark.seed", 1, "seed of the event stream")
)

// testConfig is the stream the oracle test uses: 20 events per second of
// event time, so that the stream crosses many 2- and 10-second windows
// and auctions open and expire during it, slightly out of order (within
// the tables' lateness), starting just before midnight so that the
// per-day statistics (q10, q15–q17) see two days.
func testConfig() nexmark.Config {
	return nexmark.Config{
		Seed:                *seedFlag,
		EventsPerSecond:     20,
		BaseTime:            time.Date(2026, 3, 1, 23, 55, 0, 0, time.UTC),
		OutOfOrderGroupSize: 7,
	}
}

// lateness is the tables' declared lateness: far more than the stream's
// disorder, so RockStream drops no row and PostgreSQL gets them all.
const lateness = 30 * time.Second

// pair is the two systems the test runs every statement on.
type pair struct {
	ref *oracle.Postgres
	sut *oracle.RockStream
}

// exec runs a statement on both systems; both must succeed.
func (p pair) exec(t *testing.T, ctx context.Context, ref, sut string) {
	t.Helper()
	if _, err := p.ref.Exec(ctx, ref); err != nil {
		t.Fatalf("postgres: %s: %v", short(ref), err)
	}
	if _, err := p.sut.Exec(ctx, sut); err != nil {
		t.Fatalf("rockstream: %s: %v", short(sut), err)
	}
}

// compare reads every view on both systems and reports each difference.
func (p pair) compare(t *testing.T, ctx context.Context, views []string, when string) {
	t.Helper()
	for _, v := range views {
		q := "SELECT * FROM " + v
		want, err := p.ref.Observe(ctx, q)
		if err != nil {
			t.Fatalf("postgres: %s: %v", q, err)
		}
		got, err := p.sut.Observe(ctx, q)
		if err != nil {
			t.Fatalf("%s: rockstream: %s: %v", when, q, err)
		}
		if d := columnsDiffer(want.Columns, got.Columns); d != "" {
			t.Errorf("%s: view %s: %s", when, v, d)
			continue
		}
		if d := oracle.DiffMultisets(want.Rows, got.Rows); !d.Empty() {
			t.Errorf("%s: view %s differs from PostgreSQL (%d rows):\n%s", when, v, len(want.Rows), d.Format("postgres", "rockstream"))
		}
	}
}

func columnsDiffer(want, got []oracle.Column) string {
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return fmt.Sprintf("columns differ: postgres %v, rockstream %v", want, got)
	}
	return ""
}

func short(sql string) string {
	if len(sql) > 120 {
		return sql[:117] + "..."
	}
	return sql
}

// TestQueriesMatchPostgres maintains every supported query as a
// materialized view while the generated stream is inserted — in
// transactions of -nexmark.batch events, with single-event autocommit
// inserts in between, bids behind the watermark that RockStream alone
// receives (and must drop), and a change to q13's side input — and after
// each transaction compares every view with PostgreSQL's plain view of the
// same query, as multisets. Unsupported queries must fail with 0A000
// naming their construct.
func TestQueriesMatchPostgres(t *testing.T) {
	pgtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ref, err := oracle.ConnectPostgres(ctx, "postgres", pgtest.NewDatabase(t, "nexmark"))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	sut, err := oracle.OpenRockStream()
	if err != nil {
		t.Fatal(err)
	}
	defer sut.Close()
	p := pair{ref: ref, sut: sut}

	for _, tbl := range nexmark.Tables {
		p.exec(t, ctx, tbl.CreateTable(0), tbl.CreateTable(lateness))
	}
	p.exec(t, ctx, nexmark.SideInputTable, nexmark.SideInputTable)
	p.exec(t, ctx, nexmark.SideInputRows(), nexmark.SideInputRows())

	var views []string
	for _, q := range nexmark.Queries() {
		if q.Unsupported != "" {
			_, err := sut.Exec(ctx, q.CreateView())
			var e *oracle.Error
			if !errors.As(err, &e) || e.SQLState != "0A000" || !strings.Contains(e.Message, q.Construct) {
				t.Errorf("%s: want SQLSTATE 0A000 naming %s, got %v", q.Name, q.Construct, err)
			}
			continue
		}
		p.exec(t, ctx, q.CreateViewPostgres(), q.CreateView())
		views = append(views, q.Name)
	}

	gen := nexmark.NewGenerator(testConfig())
	step, lateBids := 0, 0
	for sent := 0; sent < *eventsFlag; {
		step++
		n := min(*batchFlag, *eventsFlag-sent)
		p.exec(t, ctx, "BEGIN", "BEGIN")
		for _, ins := range nexmark.Inserts(gen.NextN(n)) {
			p.exec(t, ctx, ins, ins)
		}
		p.exec(t, ctx, "COMMIT", "COMMIT")
		sent += n
		p.compare(t, ctx, views, fmt.Sprintf("after transaction %d (%d events)", step, sent))

		// A few events on their own, each its own transaction.
		if step%3 == 0 {
			for range 3 {
				for _, ins := range nexmark.Inserts(gen.NextN(1)) {
					p.exec(t, ctx, ins, ins)
				}
				sent++
			}
			p.compare(t, ctx, views, fmt.Sprintf("after single-event inserts (%d events)", sent))
		}
		// A bid from long ago, behind the bid table's watermark: RockStream
		// drops it (PostgreSQL never sees it) and the views do not change.
		if step%5 == 2 {
			n := uint64(sent) - uint64(lateness/time.Second)*20*2
			n = n - n%50 + 10 // a bid's position
			late := nexmark.Inserts([]nexmark.Event{gen.Event(n)})[0]
			res, err := sut.Exec(ctx, late)
			if err != nil || res.Tag != "INSERT 0 0" {
				t.Fatalf("late bid: got %v, %v; want it dropped (INSERT 0 0)", res, err)
			}
			lateBids++
			p.compare(t, ctx, views, fmt.Sprintf("after a late bid (%d events)", sent))
		}
		// The side input changes: q13 is a join, not a lookup as of the
		// bid's time, so bids already joined see the new values.
		if step == 4 {
			upd := "UPDATE side_input SET value = 'changed ' || value WHERE key % 10 = 0"
			p.exec(t, ctx, upd, upd)
			p.compare(t, ctx, views, "after updating the side input")
		}
		if t.Failed() {
			return
		}
	}
	// Only the injected bids were late: the stream's disorder is within
	// the lateness.
	res, err := sut.Observe(ctx, "SELECT table_name, late_rows_dropped FROM rockstream_catalog.lateness ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(derefRows(res.Rows)), fmt.Sprintf("[[auction 0] [bid %d] [person 0]]", lateBids); got != want {
		t.Errorf("late rows dropped: %s, want %s", got, want)
	}
	// The same queries run once over the final tables (RockStream's batch
	// evaluation, the circuit over the whole input as one delta).
	for _, q := range nexmark.Queries() {
		if q.Unsupported != "" {
			continue
		}
		want, err := ref.Observe(ctx, q.Postgres)
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
	for _, v := range views {
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
