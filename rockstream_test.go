package rockstream_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

func Example() {
	ctx := context.Background()
	db, _ := rockstream.Open(rockstream.Options{})
	defer db.Close()
	db.Exec(ctx, "CREATE TABLE t (a int, b text)")
	db.Exec(ctx, "CREATE MATERIALIZED VIEW v AS SELECT b, count(*) AS n, sum(a) AS total FROM t GROUP BY b")
	db.Exec(ctx, "INSERT INTO t VALUES ($1, $2), ($3, $4)", 1, "x", 2, "x")
	res, _ := db.Query(ctx, "SELECT * FROM v")
	for _, row := range res.Rows {
		fmt.Println(*row[0], *row[1], *row[2])
	}
	// Output: x 2 3
}

func TestParamsAndErrors(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec := func(sql string, args ...any) *rockstream.Result {
		t.Helper()
		res, err := db.Exec(ctx, sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res
	}
	mustExec("CREATE TABLE t (id bigint PRIMARY KEY, name text, born date, score numeric(5,2))")
	mustExec("INSERT INTO t VALUES ($1, $2, $3, $4)", 1, "ann", "2001-02-03", "12.5")
	mustExec("INSERT INTO t VALUES ($1, $2, $3, $4)", int64(2), nil, "2002-03-04", 7)
	res := mustExec("SELECT id, name, born, score FROM t WHERE id = $1", 1)
	if got := strings.Join([]string{*res.Rows[0][0], *res.Rows[0][1], *res.Rows[0][2], *res.Rows[0][3]}, " "); got != "1 ann 2001-02-03 12.50" {
		t.Fatalf("row = %s", got)
	}
	res = mustExec("SELECT name FROM t WHERE id = 2")
	if res.Rows[0][0] != nil {
		t.Fatalf("want NULL, got %q", *res.Rows[0][0])
	}
	if res.Columns[0].TypeName != "text" || res.Columns[0].TypeOID != 25 {
		t.Fatalf("column = %+v", res.Columns[0])
	}
	_, err = db.Exec(ctx, "INSERT INTO t VALUES (1, 'dup', NULL, NULL)")
	if errs.SQLState(err) != "23505" {
		t.Fatalf("duplicate key: got %v (%s)", err, errs.SQLState(err))
	}
	_, err = db.Exec(ctx, "CREATE MATERIALIZED VIEW w AS SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE EXISTS (SELECT 1 FROM t t3 WHERE t3.id = t.id))")
	if errs.SQLState(err) != "0A000" {
		t.Fatalf("unsupported: got %v (%s)", err, errs.SQLState(err))
	}
	if _, err := db.Query(ctx, "CREATE TABLE u (a int)"); err == nil {
		t.Fatal("Query of a statement without rows succeeded")
	}
}

// TestTransactionIsolation checks that another session sees a
// transaction's changes in every view all at once, at COMMIT.
func TestTransactionIsolation(t *testing.T) {
	ctx := context.Background()
	db, _ := rockstream.Open(rockstream.Options{})
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE t (a int)",
		"CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n FROM t",
		"CREATE MATERIALIZED VIEW s AS SELECT sum(a) AS total FROM t",
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	w := db.Session()
	defer w.Close()
	for _, s := range []string{"BEGIN", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"} {
		if _, err := w.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		res, err := db.Query(ctx, "SELECT n, total FROM c, s")
		if err != nil {
			t.Fatal(err)
		}
		v := func(p *string) string {
			if p == nil {
				return "NULL"
			}
			return *p
		}
		return v(res.Rows[0][0]) + "," + v(res.Rows[0][1])
	}
	if got := read(); got != "0,NULL" {
		t.Fatalf("before COMMIT another session sees %s", got)
	}
	if _, err := w.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "2,3" {
		t.Fatalf("after COMMIT another session sees %s", got)
	}
}

// TestConcurrentSessions runs writers and readers at once; every read
// must see a consistent view (the count equals the sum of ones).
func TestConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	db, _ := rockstream.Open(rockstream.Options{})
	defer db.Close()
	db.Exec(ctx, "CREATE TABLE t (g int, one int)")
	db.Exec(ctx, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n, sum(one) AS s FROM t")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := db.Exec(ctx, "INSERT INTO t VALUES ($1, 1)", w); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				res, err := db.Query(ctx, "SELECT n, coalesce(s, 0) FROM v")
				if err != nil {
					t.Error(err)
					return
				}
				if *res.Rows[0][0] != *res.Rows[0][1] {
					t.Errorf("inconsistent read: n=%s s=%s", *res.Rows[0][0], *res.Rows[0][1])
					return
				}
			}
		}()
	}
	wg.Wait()
	res, _ := db.Query(ctx, "SELECT n FROM v")
	if *res.Rows[0][0] != "200" {
		t.Fatalf("n = %s, want 200", *res.Rows[0][0])
	}
}
