package rockstream_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
)

// writeTyped gives each value to w through the typed method of its Go
// type (Value for the types without one).
func writeTyped(w *rockstream.RowWriter, values []any) {
	for _, v := range values {
		switch x := v.(type) {
		case nil:
			w.Null()
		case bool:
			w.Bool(x)
		case int64:
			w.Int64(x)
		case uint64:
			w.Uint64(x)
		case float64:
			w.Float64(x)
		case string:
			w.String(x)
		case []byte:
			w.Bytes(x)
		case time.Time:
			w.Time(x)
		case time.Duration:
			w.Duration(x)
		default:
			w.Value(x)
		}
	}
}

// stateAndMessage returns err's SQLSTATE and message, or "ok".
func stateAndMessage(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *rockstream.Error
	if !errors.As(err, &pe) {
		return "not a rockstream.Error: " + err.Error()
	}
	return pe.SQLState + " " + pe.Message
}

// TestRowWriterIsInsert adds the same rows, of every column type and
// with NULLs, through Batch.Insert into one table and through a typed
// RowWriter into a twin table: the tables end up with the same rows, and
// every row Insert refuses (at Insert or at Apply) the writer refuses with
// the same SQLSTATE and message.
func TestRowWriterIsInsert(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const cols = "(id bigint PRIMARY KEY, small smallint, i int, n numeric(6,2), f float8, r real, name varchar(5), body text, at timestamp, atz timestamptz, d date, ok boolean, raw bytea, gap interval, doc jsonb)"
	for _, s := range []string{"CREATE TABLE boxed " + cols, "CREATE TABLE typed " + cols} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	zone := time.FixedZone("UTC+2", 2*3600)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234000, zone)
	nulls := func(id any) []any {
		return []any{id, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
	}
	with := func(id any, col int, v any) []any {
		row := nulls(id)
		row[col] = v
		return row
	}
	good := [][]any{
		{int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), "abc", "body", at, at, at, true, []byte{0xde, 0xad}, 90 * time.Minute, `{"a": [1, 2]}`},
		nulls(int64(2)),
		{uint64(3), "7", "-8", "12.345", 1.5, float32(0.25), "xy", "", "2026-01-01 00:00", "2026-01-01 00:00+00", "2026-01-02", false, []byte{}, "1 day 2 hours", "null"},
		{int64(4), int16(-5), int32(math.MaxInt32), 2.5, float32(1.5), 0.125, "éèêë", "a\x00b"[:1], at.UTC(), at.UTC(), at, nil, nil, -time.Second, nil},
		with(int64(5), 3, int64(9999)),
		with(int64(6), 4, uint64(1)<<62),
		with(int64(7), 5, int8(-3)),
		with(int64(8), 1, uint8(255)),
		with(int64(9), 2, uint(42)),
		with(int64(10), 8, time.Date(2026, 12, 2, 23, 30, 0, 1999, time.FixedZone("", -9*3600))),
	}
	bad := [][]any{
		{int64(1)},
		append(nulls(int64(20)), nil),
		with(int64(21), 1, int64(70000)),
		with(int64(22), 2, int64(math.MaxInt32)+1),
		with(int64(23), 3, "lots"),
		with(int64(24), 4, "x"),
		with(uint64(1)<<63, 1, nil),
		with(int64(25), 13, struct{}{}),
		with(int64(26), 9, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)),
		with(int64(27), 10, time.Date(-5000000, 1, 1, 0, 0, 0, 0, time.UTC)),
		with(int64(28), 11, "maybe"),
		with(int64(29), 14, "{not json"),
		with(int64(30), 1, "70000"),
		// Rejected when applied, not when added.
		with(int64(31), 6, "toolong"),
		with(int64(32), 3, int64(10000)),
		with(int64(1), 0, int64(1)),
	}
	boxed, typed := db.NewBatch(), db.NewBatch()
	w, err := typed.Writer("typed")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range good {
		if err := boxed.Insert("boxed", row...); err != nil {
			t.Fatalf("Insert(%v): %v", row, err)
		}
		writeTyped(w, row)
		if err := w.Insert(); err != nil {
			t.Fatalf("writer, %v: %v", row, err)
		}
	}
	if boxed.Len() != typed.Len() {
		t.Fatalf("Len: boxed %d, typed %d", boxed.Len(), typed.Len())
	}
	if err := db.Apply(ctx, boxed); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, typed); err != nil {
		t.Fatal(err)
	}
	want := rowsText(t, db, "SELECT * FROM boxed ORDER BY id")
	if got := rowsText(t, db, "SELECT * FROM typed ORDER BY id"); got != want {
		t.Fatalf("typed rows:\n%s\nboxed rows:\n%s", got, want)
	}

	for _, row := range bad {
		insert := func(b *rockstream.Batch, table string, add func() error) string {
			if err := add(); err != nil {
				if b.Len() != 0 {
					t.Errorf("%s, %v: a refused row left %d changes in the batch", table, row, b.Len())
				}
				return "add: " + stateAndMessage(err)
			}
			return "apply: " + stateAndMessage(db.Apply(ctx, b))
		}
		wantErr := insert(boxed, "boxed", func() error { return boxed.Insert("boxed", row...) })
		gotErr := insert(typed, "typed", func() error { writeTyped(w, row); return w.Insert() })
		if wantErr == "apply: ok" {
			t.Errorf("%v: Insert accepted a row meant to be refused", row)
		}
		// The tables' names aside, the errors are the same.
		gotErr = strings.ReplaceAll(gotErr, "typed", "boxed")
		if gotErr != wantErr {
			t.Errorf("%v: writer %q, Insert %q", row, gotErr, wantErr)
		}
	}
	// The writer is ready for another row after a refused one, and its
	// Delete and Upsert are Batch.Delete's and Batch.Upsert's.
	for _, b := range []*rockstream.Batch{boxed, typed} {
		if b.Len() != 0 {
			t.Fatalf("a batch holds %d changes after its failures", b.Len())
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(boxed.Delete("boxed", nulls(int64(2))...))
	must(boxed.Upsert("boxed", with(int64(5), 3, int64(7))...))
	writeTyped(w, nulls(int64(2)))
	must(w.Delete())
	writeTyped(w, with(int64(5), 3, int64(7)))
	must(w.Upsert())
	must(db.Apply(ctx, boxed))
	must(db.Apply(ctx, typed))
	want = rowsText(t, db, "SELECT * FROM boxed ORDER BY id")
	if got := rowsText(t, db, "SELECT * FROM typed ORDER BY id"); got != want {
		t.Errorf("after Delete and Upsert, typed rows:\n%s\nboxed rows:\n%s", got, want)
	}

	if _, err := db.NewBatch().Writer("nope"); stateAndMessage(err) != stateAndMessage(db.NewBatch().Insert("nope", 1)) {
		t.Errorf("Writer of a missing table: %s", stateAndMessage(err))
	}
}

// TestRowWriterInterleaved writes rows of two tables through two writers
// of one batch, alternating value by value: each row is added whole when
// it ends, in the order the rows end.
func TestRowWriterInterleaved(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE a (x bigint, y text)",
		"CREATE TABLE b (k bigint PRIMARY KEY, v bigint)",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	batch := db.NewBatch()
	wa, err := batch.Writer("a")
	if err != nil {
		t.Fatal(err)
	}
	wb, err := batch.Writer("b")
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(3000) {
		wa.Int64(i)
		wb.Int64(i)
		wa.String(fmt.Sprint("row ", i))
		wb.Int64(-i)
		if err := wb.Upsert(); err != nil {
			t.Fatal(err)
		}
		if err := wa.Insert(); err != nil {
			t.Fatal(err)
		}
	}
	wb.Int64(7).Int64(70)
	if err := wb.Upsert(); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got := rowsText(t, db, "SELECT count(*), sum(x), count(DISTINCT y) FROM a"); got != "3000|4498500|3000" {
		t.Errorf("a: %s", got)
	}
	if got := rowsText(t, db, "SELECT count(*), sum(v), max(v) FROM b"); got != "3000|-4498423|70" {
		t.Errorf("b: %s", got)
	}
}

// TestRowWriterAllocatesNothing checks that adding a row through a
// RowWriter into a batch grown for it allocates nothing.
func TestRowWriterAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, "CREATE TABLE e (id bigint, at timestamptz, body text, ok boolean, x float8)"); err != nil {
		t.Fatal(err)
	}
	const runs = 500
	b := db.NewBatch()
	b.Grow(runs+1, 5*(runs+1))
	w, err := b.Writer("e")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	i := int64(0)
	allocs := testing.AllocsPerRun(runs, func() {
		i++
		if err := w.Int64(i).Time(at).String("body").Bool(true).Float64(0.5).Insert(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a row allocates %.1f times, want 0", allocs)
	}
	if err := db.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := rowsText(t, db, "SELECT count(*), sum(id) FROM e"); got != fmt.Sprintf("%d|%d", i, i*(i+1)/2) {
		t.Errorf("e: %s", got)
	}
}
