package runtime

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestCopyOracle runs the same COPY statements with the same data against
// RockStream and PostgreSQL: a COPY either succeeds in both, leaving the
// same rows (compared as COPY TO output, byte for byte), or fails in both
// with the same SQLSTATE, message and context.
func TestCopyOracle(t *testing.T) {
	ctx := context.Background()
	pgc, err := pgconn.Connect(ctx, pgtest.NewDatabase(t, "copyoracle")+"&timezone=UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	defer s.Close()
	ddl := `CREATE TABLE d (id int PRIMARY KEY, name text NOT NULL DEFAULT 'anon', qty int DEFAULT 7,
		note varchar(10), at timestamptz, amount numeric(8,2))`
	if _, err := pgc.Exec(ctx, ddl).ReadAll(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, ddl)
	for _, tc := range []struct{ stmt, data string }{
		{"COPY d (id, note) FROM STDIN", "1\tfirst\n2\t\\N\n"},
		{"COPY d FROM STDIN WITH (FORMAT csv, HEADER)", "id,name,qty,note,at,amount\n3,\"x, y\",,\"\",2026-11-30 01:02:03+02,12.345\n"},
		{"COPY d (amount, id) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (amount))", "1.5,4\n"},
		{"COPY d (id, name) FROM STDIN", "5\t\\N\n"},
		{"COPY d (id) FROM STDIN", "6\n1\n"},
		{"COPY d (id, note) FROM STDIN", "7\twaytoolongtext\n"},
		{"COPY d (id, at) FROM STDIN", "8\tnot a time\n"},
		{"COPY d (id, amount) FROM STDIN", "9\t1234567.891\n"},
		{"COPY d (id, qty) FROM STDIN WITH (DELIMITER '|', NULL '')", "10|\n11|42\n"},
		{"COPY d (id, name, qty) FROM STDIN", "12\tok\n"},
		{"COPY d (id, name) FROM STDIN WITH (FORMAT csv, QUOTE '$')", "13,$multi\nline$\n14,$a$$b$\n"},
		{"COPY d (id) FROM STDIN WITH (FORMAT csv, HEADER match)", "idx\n15\n"},
	} {
		_, pgErr := pgc.CopyFrom(ctx, strings.NewReader(tc.data), tc.stmt)
		var rsErr error
		res, err := s.Exec(ctx, tc.stmt, nil)
		if err == nil {
			_, err = s.CopyFrom(ctx, res.CopyIn, strings.NewReader(tc.data))
		}
		rsErr = err
		var pe *pgconn.PgError
		var re *errs.Error
		switch {
		case pgErr == nil && rsErr == nil:
		case errors.As(pgErr, &pe) && errors.As(rsErr, &re):
			if pe.Code != re.SQLState || pe.Message != re.Message || pe.Where != re.Where {
				t.Errorf("%s: RockStream %s %s (%s); PostgreSQL %s %s (%s)", tc.stmt, re.SQLState, re.Message, re.Where, pe.Code, pe.Message, pe.Where)
			}
		default:
			t.Errorf("%s: RockStream: %v; PostgreSQL: %v", tc.stmt, rsErr, pgErr)
		}
	}
	const out = "COPY (SELECT * FROM d ORDER BY id) TO STDOUT"
	var want bytes.Buffer
	if _, err := pgc.CopyTo(ctx, &want, out); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	co := mustExec(t, s, out).CopyOut
	defer co.Close()
	for {
		p, err := co.Next(ctx)
		if err != nil {
			break
		}
		got.Write(p)
	}
	if got.String() != want.String() {
		t.Fatalf("tables differ\nRockStream:\n%s\nPostgreSQL:\n%s", got.String(), want.String())
	}
}
