package rockstream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/errs"
)

// publicErr returns err as a *rockstream.Error, failing the test when it
// is not one.
func publicErr(t *testing.T, what string, err error) *rockstream.Error {
	t.Helper()
	var e *rockstream.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %v (%T) is not a *rockstream.Error", what, err, err)
	}
	return e
}

// TestErrorFields checks that each method's statement failures carry
// PostgreSQL's fields in the exported Error type, read with errors.As.
func TestErrorFields(t *testing.T) {
	ctx := context.Background()
	db, err := rockstream.Open(rockstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO t VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}

	_, err = db.Exec(ctx, "INSERT INTO t VALUES (1, 'y')")
	e := publicErr(t, "duplicate key", err)
	if e.SQLState != "23505" || e.Code != "RS23505" || e.Message != `duplicate key value violates unique constraint "t_pkey"` ||
		e.Detail != "Key (id)=(1) already exists." || e.Error() != e.Message {
		t.Fatalf("duplicate key: %+v", e)
	}
	// The engine's own error stays reachable, for code that reads it.
	if errs.SQLState(err) != "23505" {
		t.Fatalf("duplicate key: errs.SQLState = %s", errs.SQLState(err))
	}

	// A position counts from the start of the text passed to Exec, also
	// for the second statement of several.
	s := db.Session()
	defer s.Close()
	_, err = s.Exec(ctx, "SELECT 1; SELECT FROM WHERE")
	e = publicErr(t, "syntax error", err)
	if e.SQLState != "42601" || e.Message != `syntax error at or near "WHERE"` || e.Position != 23 {
		t.Fatalf("syntax error: %+v", e)
	}

	_, err = s.Exec(ctx, "SET statement_timeout = '5 parsecs'")
	e = publicErr(t, "bad setting", err)
	if e.SQLState != "22023" || !strings.Contains(e.Hint, "Valid units") {
		t.Fatalf("bad setting: %+v", e)
	}

	_, err = db.Exec(ctx, "SELECT $1::int", struct{}{})
	if e := publicErr(t, "argument", err); e.SQLState != "22023" {
		t.Fatalf("unsupported argument: %+v", e)
	}

	_, err = db.Query(ctx, "CREATE TABLE u (a int)")
	if e := publicErr(t, "Query without rows", err); e.SQLState != "0A000" || !strings.Contains(e.Message, "CREATE TABLE") {
		t.Fatalf("Query without rows: %+v", e)
	}

	// An error ExecEach's fn returns fails the statements, and is still
	// the caller's own error under errors.Is.
	stop := errors.New("enough")
	err = s.ExecEach(ctx, "SELECT 1; SELECT 2", func(*rockstream.Result) error { return stop })
	if e := publicErr(t, "fn error", err); e.SQLState != "XX000" || e.Message != "enough" || !errors.Is(err, stop) {
		t.Fatalf("fn error: %+v", e)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Exec(canceled, "SELECT count(*) FROM generate_series(1, 100000000)")
	if e := publicErr(t, "canceled", err); e.SQLState != "57014" || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %+v", e)
	}

	_, err = s.CopyFrom(ctx, "COPY t FROM STDIN", strings.NewReader("2\ty\n3\n"))
	e = publicErr(t, "CopyFrom", err)
	if e.SQLState != "22P04" || e.Where == "" {
		t.Fatalf("CopyFrom: %+v", e)
	}
	_, err = s.CopyFrom(ctx, "COPY nosuch FROM STDIN", strings.NewReader(""))
	if e := publicErr(t, "CopyFrom of a missing table", err); e.SQLState != "42P01" {
		t.Fatalf("CopyFrom of a missing table: %+v", e)
	}

	_, err = s.CopyTo(ctx, "COPY nosuch TO STDOUT", io.Discard)
	if e := publicErr(t, "CopyTo", err); e.SQLState != "42P01" {
		t.Fatalf("CopyTo: %+v", e)
	}
	var buf bytes.Buffer
	if _, err := s.CopyTo(ctx, "COPY t TO STDOUT", &buf); err != nil || buf.String() != "1\tx\n" {
		t.Fatalf("CopyTo: %q, %v", buf.String(), err)
	}

	_, err = s.Subscribe(ctx, "SUBSCRIBE nosuch")
	if e := publicErr(t, "Subscribe", err); e.SQLState != "42P01" {
		t.Fatalf("Subscribe: %+v", e)
	}

	b := db.NewBatch()
	if err := b.Insert("t", "not a number", "z"); publicErr(t, "Batch.Insert", err).SQLState != "22P02" {
		t.Fatalf("Batch.Insert: %v", err)
	}
	if err := b.Insert("nosuch", 1); publicErr(t, "Batch.Insert", err).SQLState != "42P01" {
		t.Fatalf("Batch.Insert into a missing table: %v", err)
	}
	if err := b.Insert("t", 1, "again"); err != nil {
		t.Fatal(err)
	}
	err = db.Apply(ctx, b)
	if e := publicErr(t, "Apply", err); e.SQLState != "23505" {
		t.Fatalf("Apply: %+v", e)
	}
}

func ExampleError() {
	ctx := context.Background()
	db, _ := rockstream.Open(rockstream.Options{})
	defer db.Close()
	db.Exec(ctx, "CREATE TABLE users (id int PRIMARY KEY, name text)")
	db.Exec(ctx, "INSERT INTO users VALUES (1, 'ann')")
	_, err := db.Exec(ctx, "INSERT INTO users VALUES (1, 'bob')")
	var e *rockstream.Error
	if errors.As(err, &e) && e.SQLState == "23505" {
		fmt.Println(e.Message)
		fmt.Println(e.Detail)
	}
	_, err = db.Exec(ctx, "SELEC 1")
	if errors.As(err, &e) {
		fmt.Println(e.SQLState, e.Position)
	}
	// Output:
	// duplicate key value violates unique constraint "users_pkey"
	// Key (id)=(1) already exists.
	// 42601 1
}
