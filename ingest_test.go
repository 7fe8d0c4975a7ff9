package rockstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
)

// TestBatch applies rows given as Go values and reads them back as SQL
// sees them: each Go type lands in the column types it converts to, the
// changes apply in order in one epoch, and a failing batch applies
// nothing.
func TestBatch(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, small smallint, n numeric(6,2), f float8, name varchar(5), at timestamp, atz timestamptz, d date, ok boolean, raw bytea, gap interval)",
		"CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS rows, sum(n) AS n FROM t",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	zone := time.FixedZone("UTC+2", 2*3600)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234000, zone)
	b := db.NewBatch()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.Insert("t", 1, int16(2), 3, 4.5, "abc", at, at, at, true, []byte{0xde, 0xad}, 90*time.Minute))
	must(b.Insert("t", int64(2), nil, "12.345", float32(0.5), "xy", nil, nil, nil, false, nil, nil))
	must(b.Insert("t", uint32(3), 7, 1.25, 1, "z", "2026-01-01 00:00", "2026-01-01 00:00+00", "2026-01-02", nil, nil, "1 day"))
	must(b.Upsert("t", 3, 8, 2, 2, "zz", nil, nil, nil, nil, nil, nil))
	if b.Len() != 4 {
		t.Fatalf("Len = %d, want 4", b.Len())
	}
	epoch := db.Epoch()
	must(db.Apply(ctx, b))
	if b.Len() != 0 {
		t.Errorf("Len after Apply = %d, want 0", b.Len())
	}
	if db.Epoch() != epoch+1 {
		t.Errorf("epoch %d after Apply, want %d: a batch is one epoch", db.Epoch(), epoch+1)
	}
	got := rowsText(t, db, "SELECT * FROM t ORDER BY id")
	want := strings.Join([]string{
		"1|2|3.00|4.5|abc|2026-03-04 05:06:07.891234|2026-03-04 03:06:07.891234+00|2026-03-04|t|\\xdead|01:30:00",
		"2|NULL|12.35|0.5|xy|NULL|NULL|NULL|f|NULL|NULL",
		"3|8|2.00|2|zz|NULL|NULL|NULL|NULL|NULL|NULL",
	}, "\n")
	if got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}

	// Errors at Insert leave the batch as it was.
	for _, c := range []struct {
		values []any
		want   string
	}{
		{[]any{1}, "row has 1 values, table \"t\" has 11 columns"},
		{[]any{4, 70000, nil, nil, nil, nil, nil, nil, nil, nil, nil}, "smallint out of range"},
		{[]any{4, nil, nil, nil, nil, nil, nil, nil, nil, nil, struct{}{}}, "a Go struct {} cannot be a value of type interval"},
		{[]any{4, nil, "lots", nil, nil, nil, nil, nil, nil, nil, nil}, `invalid input syntax for type numeric: "lots"`},
		{[]any{uint64(1 << 63), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}, "out of range for type bigint"},
	} {
		if err := b.Insert("t", c.values...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Insert(%v) = %v, want an error with %q", c.values, err, c.want)
		}
	}
	if err := b.Insert("nope", 1); err == nil || !strings.Contains(err.Error(), `relation "nope" does not exist`) {
		t.Errorf("Insert into a missing table = %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("failed inserts left %d changes in the batch", b.Len())
	}

	// Errors at Apply (a value too long for its column, a duplicate key)
	// apply nothing of the batch.
	must(b.Insert("t", 10, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil))
	must(b.Insert("t", 11, nil, nil, nil, "toolong", nil, nil, nil, nil, nil, nil))
	if err := db.Apply(ctx, b); err == nil || !strings.Contains(err.Error(), "value too long for type character varying(5)") {
		t.Errorf("Apply of a too long value = %v", err)
	}
	must(b.Insert("t", 10, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil))
	must(b.Insert("t", 1, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil))
	if err := db.Apply(ctx, b); err == nil || !strings.Contains(err.Error(), `duplicate key value violates unique constraint "t_pkey"`) {
		t.Errorf("Apply of a duplicate key = %v", err)
	}
	if got := rowsText(t, db, "SELECT rows, n FROM totals"); got != "3|17.35" {
		t.Errorf("totals after failed batches = %s, want 3|17.35", got)
	}

	// A delete and an insert of the same key in one batch apply in order.
	must(b.Delete("t", 2, nil, "12.35", float32(0.5), "xy", nil, nil, nil, false, nil, nil))
	must(b.Insert("t", 2, nil, 1, nil, nil, nil, nil, nil, nil, nil, nil))
	must(db.Apply(ctx, b))
	if got := rowsText(t, db, "SELECT rows, n FROM totals"); got != "3|6.00" {
		t.Errorf("totals after delete and insert = %s, want 3|6.00", got)
	}
	if err := db.VerifyViews(); err != nil {
		t.Error(err)
	}

	other, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Apply(ctx, db.NewBatch()); err == nil {
		t.Error("Apply of another instance's batch succeeded")
	}
}

func rowsText(t *testing.T, db *rockstream.DB, sql string) string {
	t.Helper()
	res, err := db.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range res.Rows {
		var vals []string
		for _, v := range r {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, *v)
			}
		}
		lines = append(lines, strings.Join(vals, "|"))
	}
	return strings.Join(lines, "\n")
}
