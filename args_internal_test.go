package rockstream

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
	"github.com/rockstream/rockstream/internal/types"
)

// TestArgsMeanWhatTheirTextMeans binds every kind of Go argument to
// parameters of every column type both ways, as a value (execArgs) and as
// the text a client would send (execArgsAsText), and checks that the two
// store the same value or fail with the same error. The only argument the
// text path cannot bind, time.Duration for an interval, is checked on its
// own.
func TestArgsMeanWhatTheirTextMeans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	columns := []string{"smallint", "integer", "bigint", "numeric", "numeric(6,2)", "real",
		"double precision", "text", "varchar(3)", "boolean", "bytea", "date", "timestamp", "timestamptz", "interval"}
	zone := time.FixedZone("east", 5*3600+1800)
	args := []any{
		nil, 0, -1, 7, int8(-8), int16(300), int32(70000), int64(math.MaxInt64), int64(math.MinInt64),
		uint(5), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64),
		1.5, -0.1, 0.1 + 0.2, math.Inf(1), math.NaN(), 1e300, float32(0.1), float32(-2.5),
		true, false, []byte{0, 1, 0xfe}, []byte{},
		time.Date(2024, 2, 29, 23, 30, 0, 123456789, zone), time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
		"12", "1.5", "abcd", "t", "2024-01-02", "1 day", `\x00ff`, "",
	}
	for i, col := range columns {
		if _, err := db.Exec(ctx, fmt.Sprintf("CREATE TABLE v%d (k int PRIMARY KEY, a %s)", i, col)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, fmt.Sprintf("CREATE TABLE t%d (k int PRIMARY KEY, a %s)", i, col)); err != nil {
			t.Fatal(err)
		}
		for k, a := range args {
			s := db.Session()
			byValue, errValue := execArgs(ctx, s.s, s.stmts, fmt.Sprintf("INSERT INTO v%d VALUES ($1, $2) RETURNING a", i), []any{k, a})
			byText, errText := execArgsAsText(ctx, s.s, fmt.Sprintf("INSERT INTO t%d VALUES ($1, $2) RETURNING a", i), []any{k, a})
			s.Close()
			what := fmt.Sprintf("%s column, argument %T %v", col, a, a)
			if errs.SQLState(errValue) != errs.SQLState(errText) || fmt.Sprint(errValue) != fmt.Sprint(errText) {
				t.Errorf("%s: as a value: %v; as text: %v", what, errValue, errText)
				continue
			}
			if errValue != nil {
				continue
			}
			got, want := returned(byValue), returned(byText)
			if got != want {
				t.Errorf("%s: as a value %s, as text %s", what, got, want)
			}
		}
	}
	if _, err := db.Exec(ctx, "CREATE TABLE d (a interval)"); err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(ctx, "INSERT INTO d VALUES ($1) RETURNING a", 90*time.Minute+time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := *res.Rows[0][0]; got != "01:30:00.000001" {
		t.Fatalf("time.Duration as an interval = %s", got)
	}
}

// TestArgsAfterDDL checks that a statement kept in the cache is prepared
// again when the catalog it was bound against changes: after DDL, and
// inside a transaction block whose DDL only that block sees.
func TestArgsAfterDDL(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The parameter's type is the column's: integer, then double
	// precision, then, inside a block, text.
	const sel = "SELECT count(*) FROM c WHERE a = $1"
	count := func(s *Session, a any) (string, error) {
		res, err := s.Exec(ctx, sel, a)
		if err != nil {
			return "", err
		}
		return *res.Rows[0][0], nil
	}
	s := db.Session()
	defer s.Close()
	run := func(stmts ...string) {
		t.Helper()
		for _, sql := range stmts {
			if _, err := s.Exec(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("CREATE TABLE c (a int)", "INSERT INTO c VALUES (7)")
	if got, err := count(s, 7); err != nil || got != "1" {
		t.Fatalf("int column: %q, %v", got, err)
	}
	if _, err := count(s, 1.5); errs.SQLState(err) != "22P02" {
		t.Fatalf("1.5 against an int column: %v", err)
	}
	run("DROP TABLE c", "CREATE TABLE c (a double precision)", "INSERT INTO c VALUES (1.5)")
	if got, err := count(s, 1.5); err != nil || got != "1" {
		t.Fatalf("after DDL, double precision column: %q, %v", got, err)
	}
	run("BEGIN", "DROP TABLE c", "CREATE TABLE c (a text)", "INSERT INTO c VALUES ('true')")
	if got, err := count(s, true); err != nil || got != "1" {
		t.Fatalf("inside the block, text column: %q, %v", got, err)
	}
	// Another session still sees the committed catalog.
	other := db.Session()
	defer other.Close()
	if got, err := count(other, 1.5); err != nil || got != "1" {
		t.Fatalf("outside the block: %q, %v", got, err)
	}
	if _, err := count(other, true); errs.SQLState(err) != "22P02" {
		t.Fatalf("outside the block, true against a double precision column: %v", err)
	}
	run("ROLLBACK")
	if _, err := count(s, true); errs.SQLState(err) != "22P02" {
		t.Fatalf("after ROLLBACK, true against a double precision column: %v", err)
	}
}

// TestArgsConcurrently runs one statement with arguments from many
// goroutines at once (run with -race): a cached statement serves one
// caller at a time.
func TestArgsConcurrently(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, "CREATE TABLE c (k int PRIMARY KEY, a text)"); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := db.Exec(ctx, "INSERT INTO c VALUES ($1, $2)", w*each+i, fmt.Sprint(w)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	res, err := db.Query(ctx, "SELECT count(*), count(DISTINCT a) FROM c")
	if err != nil {
		t.Fatal(err)
	}
	if got := *res.Rows[0][0] + " " + *res.Rows[0][1]; got != fmt.Sprint(writers*each, " ", writers) {
		t.Fatalf("count = %s", got)
	}
}

// returned is the value a RETURNING a gave, as text.
func returned(r *runtime.Result) string {
	v := publicResult(r, types.UTCZone).Rows[0][0]
	if v == nil {
		return "NULL"
	}
	return *v
}
