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
	batchFlag  = flag.Int("nexmark.batch", 600, "events per transaction in TestQueriesMatchPostgres")
	seedFlag   = flag.Uint64("nexmark.seed", 1, "seed of the event stream")
	// The tables' declared lateness is far more than the stream's
	// disorder, so RockStream drops only the late bids the test injects.
	latenessFlag = flag.Duration("nexmark.lateness", 30*time.Second, "lateness of the event tables (0: no event time declared, no late bids injected)")
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
		p.exec(t, ctx, tbl.CreateTable(0), tbl.CreateTable(*latenessFlag))
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

		// Between transactions, now and then: a few events on their own,
		// each its own transaction; a bid from long ago, behind the bid
		// table's watermark (twice the lateness back), which RockStream
		// drops and PostgreSQL never sees; a change to the side input (q13
		// is a join, not a lookup as of the bid's time, so bids already
		// joined see the new values). The views are compared after them.
		var extras []string
		if step%3 == 0 {
			for range 3 {
				for _, ins := range nexmark.Inserts(gen.NextN(1)) {
					p.exec(t, ctx, ins, ins)
				}
				sent++
			}
			extras = append(extras, "single-event inserts")
		}
		back := 2 * int(latenessFlag.Seconds()) * testConfig().EventsPerSecond
		if step%5 == 2 && *latenessFlag > 0 && sent > back {
			n := uint64(sent - back)
			n = n - n%50 + 10 // a bid's position
			late := nexmark.Inserts([]nexmark.Event{gen.Event(n)})[0]
			res, err := sut.Exec(ctx, late)
			if err != nil || res.Tag != "INSERT 0 0" {
				t.Fatalf("late bid: got %v, %v; want it dropped (INSERT 0 0)", res, err)
			}
			lateBids++
			extras = append(extras, "a late bid")
		}
		if step == 4 {
			upd := "UPDATE side_input SET value = 'changed ' || value WHERE key % 10 = 0"
			p.exec(t, ctx, upd, upd)
			extras = append(extras, "updating the side input")
		}
		if len(extras) > 0 {
			p.compare(t, ctx, views, fmt.Sprintf("after %s (%d events)", strings.Join(extras, ", "), sent))
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
	want := fmt.Sprintf("[[auction 0] [bid %d] [person 0]]", lateBids)
	if *latenessFlag == 0 {
		want = "[]"
	}
	if got := fmt.Sprint(derefRows(res.Rows)); got != want {
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
