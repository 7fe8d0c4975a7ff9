package clients

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/lib/pq"
)

// TestPgx runs the scenario with pgx in each of its query exec modes,
// through its database/sql adapter.
func TestPgx(t *testing.T) {
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			e := serverFor(t)
			db, err := sql.Open("pgx", e.dsn()+"&default_query_exec_mode="+mode)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			goScenario(t, e, db, "gx", pgxCopy{})
		})
	}
}

// TestLibPQ runs the scenario with lib/pq. lib/pq has no API for COPY TO
// STDOUT, so that step reads the same rows with a query instead.
func TestLibPQ(t *testing.T) {
	e := serverFor(t)
	db, err := sql.Open("postgres", e.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	goScenario(t, e, db, "lq", pqCopy{})
}

// copier is a driver's COPY API.
type copier interface {
	copyIn(ctx context.Context, conn *sql.Conn, table string, rows [][]any) error
	// copyOut returns the CSV output of COPY (query) TO STDOUT.
	copyOut(ctx context.Context, conn *sql.Conn, query string) (string, error)
}

type pgxCopy struct{}

func (pgxCopy) copyIn(ctx context.Context, conn *sql.Conn, table string, rows [][]any) error {
	var text strings.Builder
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				text.WriteByte('\t')
			}
			fmt.Fprint(&text, v)
		}
		text.WriteByte('\n')
	}
	return conn.Raw(func(dc any) error {
		tag, err := dc.(*stdlib.Conn).Conn().PgConn().CopyFrom(ctx, strings.NewReader(text.String()), "COPY "+table+" FROM STDIN")
		if err == nil && tag.RowsAffected() != int64(len(rows)) {
			err = fmt.Errorf("COPY reported %d rows, want %d", tag.RowsAffected(), len(rows))
		}
		return err
	})
}

func (pgxCopy) copyOut(ctx context.Context, conn *sql.Conn, query string) (string, error) {
	var out bytes.Buffer
	err := conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().PgConn().CopyTo(ctx, &out, "COPY ("+query+") TO STDOUT WITH (FORMAT csv)")
		return err
	})
	return out.String(), err
}

type pqCopy struct{}

func (pqCopy) copyIn(ctx context.Context, conn *sql.Conn, table string, rows [][]any) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, pq.CopyIn(table, "id", "customer", "amount"))
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r...); err != nil {
			return err
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return err
	}
	if err := stmt.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

func (pqCopy) copyOut(ctx context.Context, conn *sql.Conn, query string) (string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out strings.Builder
	for rows.Next() {
		var customer, total, n string
		if err := rows.Scan(&customer, &total, &n); err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "%s,%s,%s\n", customer, total, n)
	}
	return out.String(), rows.Err()
}

// goScenario is the client scenario for a Go driver behind database/sql.
func goScenario(t *testing.T, e endpoint, db *sql.DB, p string, cp copier) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, q, args...)
		must(err)
	}
	view := "MATERIALIZED VIEW"
	if e.postgres {
		view = "VIEW"
	}
	exec("CREATE TABLE " + p + "_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2))")
	exec("CREATE " + view + " " + p + "_totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM " + p + "_orders GROUP BY customer")

	// Parameterized DML through a prepared statement.
	ins, err := db.PrepareContext(ctx, "INSERT INTO "+p+"_orders VALUES ($1, $2, $3)")
	must(err)
	for _, r := range [][]any{{1, "alice", "10.50"}, {2, "bob", "3.25"}, {3, "alice", "1.00"}} {
		_, err := ins.ExecContext(ctx, r...)
		must(err)
	}
	must(ins.Close())

	// A committed transaction and a rolled-back one.
	tx, err := db.BeginTx(ctx, nil)
	must(err)
	_, err = tx.ExecContext(ctx, "INSERT INTO "+p+"_orders VALUES ($1, $2, $3)", 4, "carol", "7")
	must(err)
	_, err = tx.ExecContext(ctx, "UPDATE "+p+"_orders SET amount = amount + 1 WHERE id = $1", 2)
	must(err)
	must(tx.Commit())
	tx, err = db.BeginTx(ctx, nil)
	must(err)
	_, err = tx.ExecContext(ctx, "INSERT INTO "+p+"_orders VALUES ($1, $2, $3)", 5, "dave", "100")
	must(err)
	must(tx.Rollback())

	// Read the view.
	viewQuery := "SELECT customer, total, n FROM " + p + "_totals ORDER BY customer"
	expectRows(t, db, viewQuery, [][]string{{"alice", "11.50", "2"}, {"bob", "4.25", "1"}, {"carol", "7.00", "1"}})

	// COPY in and out.
	conn, err := db.Conn(ctx)
	must(err)
	must(cp.copyIn(ctx, conn, p+"_orders", [][]any{{6, "erin", "2.50"}, {7, "alice", "0.50"}}))
	out, err := cp.copyOut(ctx, conn, viewQuery)
	must(err)
	if want := "alice,12.00,3\nbob,4.25,1\ncarol,7.00,1\nerin,2.50,1\n"; out != want {
		t.Fatalf("COPY TO STDOUT: got %q, want %q", out, want)
	}
	must(conn.Close())

	// SUBSCRIBE through a cursor sees a change committed by another
	// connection.
	if !e.postgres {
		sub, err := db.BeginTx(ctx, nil)
		must(err)
		_, err = sub.ExecContext(ctx, "DECLARE c CURSOR FOR SUBSCRIBE "+p+"_totals WITH (SNAPSHOT = false)")
		must(err)
		exec("INSERT INTO "+p+"_orders VALUES ($1, $2, $3)", 8, "bob", "1.00")
		rows, err := sub.QueryContext(ctx, "FETCH ALL c WITH (timeout = '10s')")
		must(err)
		var changes []string
		for rows.Next() {
			var epoch, diff int64
			var customer, total, n string
			must(rows.Scan(&epoch, &diff, &customer, &total, &n))
			changes = append(changes, fmt.Sprintf("%d %s %s %s", diff, customer, total, n))
		}
		must(rows.Err())
		sort.Strings(changes)
		if want := []string{"-1 bob 4.25 1", "1 bob 5.25 2"}; !reflect.DeepEqual(changes, want) {
			t.Fatalf("SUBSCRIBE changes: got %q, want %q", changes, want)
		}
		must(sub.Rollback())
	} else {
		exec("INSERT INTO "+p+"_orders VALUES ($1, $2, $3)", 8, "bob", "1.00")
	}

	// An error leaves the session usable.
	conn, err = db.Conn(ctx)
	must(err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SELECT 1/0")
	if code := sqlState(err); code != "22012" {
		t.Fatalf("SELECT 1/0: got %v (SQLSTATE %q), want SQLSTATE 22012", err, code)
	}
	var n int
	must(conn.QueryRowContext(ctx, "SELECT count(*) FROM "+p+"_orders").Scan(&n))
	if n != 7 {
		t.Fatalf("rows after the error: got %d, want 7", n)
	}
}

// sqlState returns the SQLSTATE of a driver's error, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return string(pqErr.Code)
	}
	return ""
}

// expectRows checks a query's rows, each column read as text.
func expectRows(t *testing.T, db *sql.DB, query string, want [][]string) {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for rows.Next() {
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %q, want %q", query, got, want)
	}
}
