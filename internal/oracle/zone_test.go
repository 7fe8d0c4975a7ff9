package oracle

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rockstream/rockstream"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestZoneViews runs the scripts of testdata/zones with the session time
// zone set on every session of both sides, in zones with daylight saving
// in both hemispheres, half-hour offsets and none: a materialized view
// of zone-dependent expressions must equal PostgreSQL's query evaluated
// with the same TimeZone.
func TestZoneViews(t *testing.T) {
	pgtest.Require(t)
	files, err := filepath.Glob(filepath.Join("testdata", "zones", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no zone scripts: %v", err)
	}
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC"} {
		for _, path := range files {
			t.Run(zone+"/"+filepath.Base(path), func(t *testing.T) {
				runZoneScript(t, path, zone)
			})
		}
	}
}

func runZoneScript(t *testing.T, path, zone string) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := ParseScript(path, string(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dsn := pgtest.NewDatabase(t, "oracle")
	ref, err := ConnectPostgres(ctx, "postgres", dsn+"&TimeZone="+zone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	sut := newRockStream(t)
	for _, sess := range []*rockstream.Session{sut.script, sut.observer} {
		if _, err := sess.Exec(ctx, "SET TimeZone = '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
	}
	r := &Runner{Ref: ref, SUT: sut, Source: path, Strict: true}
	fs, err := r.Run(ctx, stmts, maxFindings)
	for _, f := range fs {
		t.Errorf("%s", f)
	}
	if err != nil {
		t.Fatal(err)
	}
}
