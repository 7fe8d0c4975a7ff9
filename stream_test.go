package rockstream

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestStreams: COPY and SUBSCRIBE through the embedded API.
func TestStreams(t *testing.T) {
	ctx := context.Background()
	db, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := db.Session()
	defer s.Close()
	if _, err := s.Exec(ctx, "CREATE TABLE t (k int, v text); CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t"); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, "SUBSCRIBE mv WITH (SNAPSHOT false)")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	res, err := s.CopyFrom(ctx, "COPY t FROM STDIN WITH (FORMAT csv)", strings.NewReader("1,one\n2,\"two, too\"\n"))
	if err != nil || res.Tag != "COPY 2" {
		t.Fatalf("CopyFrom: %v %v", res, err)
	}
	var out bytes.Buffer
	if res, err = s.CopyTo(ctx, "COPY (SELECT * FROM mv ORDER BY k) TO STDOUT", &out); err != nil || res.Tag != "COPY 2" {
		t.Fatalf("CopyTo: %v %v", res, err)
	}
	if out.String() != "1\tone\n2\ttwo, too\n" {
		t.Fatalf("CopyTo wrote %q", out.String())
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rows, err := sub.Next(wctx)
	if err != nil || len(rows) != 2 || *rows[0][1] != "1" || *rows[1][3] != "two, too" {
		t.Fatalf("Next: %v %v", rows, err)
	}
	for _, stmt := range []string{"COPY t FROM STDIN", "COPY t TO STDOUT", "SUBSCRIBE mv"} {
		if _, err := s.Exec(ctx, stmt); errs.SQLState(err) != "0A000" {
			t.Fatalf("Exec(%s): %v, want 0A000", stmt, err)
		}
	}
	sub.Close()
	if _, err := sub.Next(ctx); err != io.EOF {
		t.Fatalf("Next after Close: %v", err)
	}
}
