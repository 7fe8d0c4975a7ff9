package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/zset"
)

func mustExec(t *testing.T, s *Session, q string) *Result {
	t.Helper()
	res, err := s.Exec(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// viewContents returns a relation's rows as a multiset of their text.
func viewContents(t *testing.T, s *Session, name string) map[string]int64 {
	t.Helper()
	res := mustExec(t, s, "SELECT * FROM "+name)
	out := map[string]int64{}
	for _, r := range res.Rows {
		out[rowLine(r, res.Columns)]++
	}
	return out
}

// subscriptionState folds subscription rows into a multiset of view rows
// (the columns after diff), checking that epochs never go back. It
// returns the epoch of the last progress row seen.
type subscriptionState struct {
	rows        map[string]int64
	lastEpoch   int64
	progressed  int64
	hasProgress bool
}

func (st *subscriptionState) apply(t *testing.T, rows []zset.Row, cols []Column) {
	t.Helper()
	diffAt := 1
	if st.hasProgress {
		diffAt = 2
	}
	for _, r := range rows {
		epoch := r[0].Int()
		if epoch < st.lastEpoch {
			t.Fatalf("epoch %d after epoch %d", epoch, st.lastEpoch)
		}
		st.lastEpoch = epoch
		if st.hasProgress && r[1].Bool() {
			st.progressed = epoch
			continue
		}
		key := rowLine(r[diffAt+1:], cols[diffAt+1:])
		st.rows[key] += r[diffAt].Int()
		if st.rows[key] == 0 {
			delete(st.rows, key)
		}
		if st.rows[key] < 0 {
			t.Fatalf("row %q has a negative count", key)
		}
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSubscribeConcurrentWriters: a subscription's snapshot plus its
// changes always add up to the view, while several sessions commit
// concurrently, in autocommit and in blocks.
func TestSubscribeConcurrentWriters(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	admin := eng.NewSession()
	defer admin.Close()
	mustExec(t, admin, "CREATE TABLE t (k int, v int)")
	mustExec(t, admin, "CREATE TABLE tick (x int)")
	mustExec(t, admin, "CREATE MATERIALIZED VIEW agg AS SELECT k % 5 AS g, count(*) AS n, sum(v) AS s FROM t GROUP BY k % 5")
	mustExec(t, admin, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")

	res := mustExec(t, admin, "SUBSCRIBE agg WITH (PROGRESS)")
	sub := res.Subscription
	defer sub.Close()
	state := &subscriptionState{rows: map[string]int64{}, hasProgress: true}

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := eng.NewSession()
			defer s.Close()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 40; i++ {
				var q string
				switch rng.Intn(4) {
				case 0:
					q = fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", rng.Intn(20), rng.Intn(100))
				case 1:
					q = fmt.Sprintf("UPDATE t SET v = v + 1 WHERE k = %d", rng.Intn(20))
				case 2:
					q = fmt.Sprintf("DELETE FROM t WHERE k = %d", rng.Intn(20))
				default:
					for _, stmt := range []string{"BEGIN", fmt.Sprintf("INSERT INTO t VALUES (%d, 7)", rng.Intn(20)), fmt.Sprintf("UPDATE t SET v = 0 WHERE k = %d", rng.Intn(20)), "COMMIT"} {
						if _, err := s.Exec(context.Background(), stmt, nil); err != nil {
							t.Error(err)
						}
					}
					continue
				}
				if _, err := s.Exec(context.Background(), q, nil); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	// Read while the writers write.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
			rctx, rcancel := context.WithTimeout(ctx, 20*time.Millisecond)
			rows, err := sub.Next(rctx)
			rcancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatal(err)
			}
			state.apply(t, rows, res.Columns)
		}
	}
	// A write that leaves the view alone makes a progress row that
	// certifies every change up to it has been seen.
	mustExec(t, admin, "INSERT INTO tick VALUES (1)")
	final := int64(eng.Epoch())
	for state.progressed < final {
		rows, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		state.apply(t, rows, res.Columns)
	}
	if want := viewContents(t, admin, "agg"); !equalCounts(state.rows, want) {
		t.Fatalf("snapshot plus changes give\n%v\nthe view holds\n%v", state.rows, want)
	}
}

// TestSubscribeResume: a client that reconnects with AS OF EPOCH of the
// last epoch it completed and SNAPSHOT false gets exactly the changes it
// had not seen: the two streams together equal one uninterrupted stream.
func TestSubscribeResume(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	mustExec(t, s, "CREATE TABLE t (k int, v text)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t WHERE k % 3 <> 0")
	start := eng.Epoch()
	whole := mustExec(t, s, fmt.Sprintf("SUBSCRIBE mv WITH (SNAPSHOT false) AS OF EPOCH %d", start)).Subscription
	defer whole.Close()
	first := mustExec(t, s, "SUBSCRIBE mv WITH (SNAPSHOT false, PROGRESS)")
	rng := rand.New(rand.NewSource(7))
	write := func(n int) {
		for i := 0; i < n; i++ {
			k := rng.Intn(30)
			if rng.Intn(3) == 0 {
				mustExec(t, s, fmt.Sprintf("DELETE FROM t WHERE k = %d", k))
			} else {
				mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d, 'v%d')", k, i))
			}
		}
	}
	write(30)
	mustExec(t, s, "CREATE TABLE marker (x int)") // an epoch without a change to mv
	cut := eng.Epoch()
	var seen []string
	ctx := context.Background()
	for done := false; !done; {
		rows, err := first.Subscription.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r[1].Bool() {
				done = uint64(r[0].Int()) >= cut
				continue
			}
			seen = append(seen, rowLine(append(zset.Row{r[0]}, r[2:]...), nil))
		}
	}
	first.Subscription.Close()
	write(30)
	mustExec(t, s, "CREATE TABLE marker2 (x int)")
	end := eng.Epoch()
	resumed := mustExec(t, s, fmt.Sprintf("SUBSCRIBE mv WITH (SNAPSHOT false, PROGRESS) AS OF EPOCH %d", cut))
	defer resumed.Subscription.Close()
	for done := false; !done; {
		rows, err := resumed.Subscription.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r[1].Bool() {
				done = uint64(r[0].Int()) >= end
				continue
			}
			if uint64(r[0].Int()) <= cut {
				t.Fatalf("resumed stream repeats epoch %d", r[0].Int())
			}
			seen = append(seen, rowLine(append(zset.Row{r[0]}, r[2:]...), nil))
		}
	}
	var want []string
	for len(want) < len(seen) {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		rows, err := whole.Next(rctx)
		cancel()
		if err != nil {
			t.Fatalf("the uninterrupted stream has %d rows, the resumed ones %d: %v", len(want), len(seen), err)
		}
		for _, r := range rows {
			want = append(want, rowLine(r, nil))
		}
	}
	if strings.Join(seen, "") != strings.Join(want, "") {
		t.Fatalf("resumed streams:\n%s\nuninterrupted:\n%s", strings.Join(seen, ""), strings.Join(want, ""))
	}
	if len(seen) == 0 {
		t.Fatal("no changes at all")
	}
}

// TestSubscribeRetention: an epoch older than the change-log horizon is
// refused with the oldest epoch that can be read.
func TestSubscribeRetention(t *testing.T) {
	eng, err := Open(NewMemoryStore(), Options{ChangeLogRetention: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	mustExec(t, s, "CREATE TABLE t (k int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t")
	for i := 0; i < 150; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d)", i))
	}
	oldest := eng.oldestRetained(eng.Epoch())
	_, err = s.Exec(context.Background(), "SUBSCRIBE mv WITH (SNAPSHOT false) AS OF EPOCH 3", nil)
	if errs.SQLState(err) != "22023" || !strings.Contains(err.Error(), fmt.Sprintf("oldest readable epoch is %d", oldest)) {
		t.Fatalf("got %v, want 22023 naming epoch %d", err, oldest)
	}
	// From the oldest epoch on, the stream holds exactly the rows
	// inserted since.
	res := mustExec(t, s, fmt.Sprintf("SUBSCRIBE mv WITH (SNAPSHOT false) AS OF EPOCH %d", oldest))
	defer res.Subscription.Close()
	rows, err := res.Subscription.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := int(eng.Epoch() - oldest); len(rows) != want {
		t.Fatalf("%d rows since epoch %d, want %d", len(rows), oldest, want)
	}
	// A subscriber that falls behind the horizon is told so.
	for i := 0; i < 150; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d)", i))
	}
	if _, err := res.Subscription.Next(context.Background()); errs.SQLState(err) != "22023" || !strings.Contains(err.Error(), "fell behind the change-log horizon") {
		t.Fatalf("a subscriber behind the horizon: %v", err)
	}
}

// TestSubscribeEnds: Next returns io.EOF when the subscription is closed
// or the engine closes, also while it waits; nothing is left running.
func TestSubscribeEnds(t *testing.T) {
	before := goruntime.NumGoroutine()
	eng := OpenMemory()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (k int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t")
	waitEOF := func(sub *Subscription, end func()) {
		t.Helper()
		got := make(chan error, 1)
		go func() {
			for {
				_, err := sub.Next(context.Background())
				if err != nil {
					got <- err
					return
				}
			}
		}()
		time.Sleep(20 * time.Millisecond) // let Next block
		end()
		select {
		case err := <-got:
			if err != io.EOF {
				t.Fatalf("Next returned %v, want io.EOF", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Next did not return")
		}
	}
	a := mustExec(t, s, "SUBSCRIBE mv").Subscription
	waitEOF(a, a.Close)
	b := mustExec(t, s, "SUBSCRIBE mv WITH (PROGRESS)").Subscription
	copyOut := mustExec(t, s, "COPY (SUBSCRIBE mv) TO STDOUT").CopyOut
	s.Close()
	waitEOF(b, func() {
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := copyOut.Next(context.Background()); err != io.EOF {
		t.Fatalf("COPY (SUBSCRIBE) after close: %v, want io.EOF", err)
	}
	b.Close()
	copyOut.Close()
	deadline := time.Now().Add(5 * time.Second)
	for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left, %d before:\n%s", n, before, buf[:goruntime.Stack(buf, true)])
	}
}

// TestFetchWakesOnCommit: a FETCH over a SUBSCRIBE cursor returns as
// soon as another session commits a change, well before its timeout.
func TestFetchWakesOnCommit(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	reader, writer := eng.NewSession(), eng.NewSession()
	defer reader.Close()
	defer writer.Close()
	mustExec(t, writer, "CREATE TABLE t (k int)")
	mustExec(t, writer, "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t")
	mustExec(t, reader, "BEGIN")
	mustExec(t, reader, "DECLARE c CURSOR FOR SUBSCRIBE mv WITH (SNAPSHOT false)")
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		time.Sleep(50 * time.Millisecond)
		if _, err := writer.Exec(context.Background(), "INSERT INTO t VALUES (1), (2)", nil); err != nil {
			t.Error(err)
		}
	}()
	defer func() { <-wrote }()
	start := time.Now()
	res := mustExec(t, reader, "FETCH ALL c WITH (timeout = '1 minute')")
	if res.Tag != "FETCH 2" || time.Since(start) > 30*time.Second {
		t.Fatalf("%s after %v", res.Tag, time.Since(start))
	}
	// Cancelling the statement ends a FETCH without a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := reader.Exec(ctx, "FETCH c", nil); errs.SQLState(err) != "57014" {
		t.Fatalf("canceled FETCH: %v, want 57014", err)
	}
	mustExec(t, reader, "ROLLBACK")
}

// TestCopyBinaryRoundTrip: what COPY TO writes in binary, COPY FROM reads
// back to the same rows, for every type.
func TestCopyBinaryRoundTrip(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	ddl := "(b bool, i2 smallint, i4 int, i8 bigint, n numeric(12,3), f4 real, f8 float8, t text, vc varchar(5), by bytea, d date, ts timestamp, tz timestamptz, iv interval)"
	mustExec(t, s, "CREATE TABLE src "+ddl)
	mustExec(t, s, "CREATE TABLE dst "+ddl)
	mustExec(t, s, "CREATE MATERIALIZED VIEW dst_count AS SELECT count(*) AS n, count(t) AS texts FROM dst")
	mustExec(t, s, `INSERT INTO src VALUES
		(true, 1, 2, 3, 4.5, 1.5, 2.25, 'tab	and
newline', 'é漢', '\x00ff', '2026-11-30', '2026-11-30 01:02:03', '2026-11-30 01:02:03+00', '1 day 2 hours'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(false, -32768, -2147483648, -9223372036854775808, -0.001, 'NaN', '-Infinity', '', '', '', 'infinity', '-infinity', 'infinity', '-1 mons')`)
	out := mustExec(t, s, "COPY src TO STDOUT WITH (FORMAT binary)").CopyOut
	var data bytes.Buffer
	for {
		p, err := out.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data.Write(p)
	}
	out.Close()
	if out.Tag() != "COPY 3" || !out.Binary {
		t.Fatalf("tag %q binary %v", out.Tag(), out.Binary)
	}
	in := mustExec(t, s, "COPY dst FROM STDIN (FORMAT binary)").CopyIn
	if !in.Binary || in.Columns != 14 {
		t.Fatalf("CopyIn %+v", in)
	}
	res, err := s.CopyFrom(context.Background(), in, &data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != "COPY 3" {
		t.Fatalf("tag %q", res.Tag)
	}
	if a, b := viewContents(t, s, "src"), viewContents(t, s, "dst"); !equalCounts(a, b) {
		t.Fatalf("copied\n%v\ngot\n%v", a, b)
	}
	if got := viewContents(t, s, "dst_count"); !equalCounts(got, map[string]int64{"3 | 2\n": 1}) {
		t.Fatalf("view after COPY: %v", got)
	}
}

// TestCopyFail: a COPY the client abandons inserts nothing and fails the
// transaction block it is in.
func TestCopyFail(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	mustExec(t, s, "CREATE TABLE t (k int)")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO t VALUES (1)")
	in := mustExec(t, s, "COPY t FROM STDIN").CopyIn
	if err := s.CopyFail("client gave up"); errs.SQLState(err) != "57014" || err.Error() != "COPY from stdin failed: client gave up" {
		t.Fatalf("CopyFail: %v", err)
	}
	_ = in
	if _, err := s.Exec(context.Background(), "SELECT 1", nil); errs.SQLState(err) != "25P02" {
		t.Fatalf("after CopyFail: %v, want 25P02", err)
	}
	if res := mustExec(t, s, "COMMIT"); res.Tag != "ROLLBACK" {
		t.Fatalf("COMMIT after CopyFail: %s", res.Tag)
	}
	if got := viewContents(t, s, "t"); len(got) != 0 {
		t.Fatalf("rows after a failed block: %v", got)
	}
}

// BenchmarkCopyFrom measures COPY FROM STDIN of 10,000 rows into a keyed
// table with a view over it.
func BenchmarkCopyFrom(b *testing.B) {
	var data strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&data, "%d\tname %d\t%d.%02d\n", i, i, i, i%100)
	}
	b.SetBytes(int64(data.Len()))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		eng := OpenMemory()
		s := eng.NewSession()
		ctx := context.Background()
		for _, q := range []string{"CREATE TABLE t (id int PRIMARY KEY, name text, price numeric)", "CREATE MATERIALIZED VIEW v AS SELECT count(*), sum(price) FROM t"} {
			if _, err := s.Exec(ctx, q, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := s.Exec(ctx, "COPY t FROM STDIN", nil)
		if err != nil {
			b.Fatal(err)
		}
		if res, err = s.CopyFrom(ctx, res.CopyIn, strings.NewReader(data.String())); err != nil || res.Tag != "COPY 10000" {
			b.Fatal(res, err)
		}
		b.StopTimer()
		s.Close()
		eng.Close()
		b.StartTimer()
	}
}
