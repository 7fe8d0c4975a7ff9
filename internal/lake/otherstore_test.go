package lake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/instance"
	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestEachRefusesTheOthersDirectory checks that RockLake refuses a
// directory holding a RockStream database, and RockStream one holding a
// lake, each with 42809 naming the command that opens it, and that the
// refused directory still opens, unchanged, with the right one.
func TestEachRefusesTheOthersDirectory(t *testing.T) {
	ctx := context.Background()
	engineDir, lakeDir := t.TempDir(), t.TempDir()

	eng, err := instance.Open(instance.Options{Storage: engineDir, Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE t (a int)", "INSERT INTO t VALUES (1)"} {
		if _, err := eng.NewSession().Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := lake.Open(lake.Config{Dir: engineDir, Durability: storage.Relaxed}); errs.SQLState(err) != "42809" ||
		!strings.Contains(err.Error(), "holds a RockStream database") || !strings.Contains(err.Error(), "rockstream start") {
		t.Fatalf("lake on a RockStream directory: %v", err)
	}
	eng, err = instance.Open(instance.Options{Storage: engineDir, Relaxed: true})
	if err != nil {
		t.Fatalf("reopening the RockStream directory: %v", err)
	}
	res, err := eng.NewSession().Exec(ctx, "SELECT count(*) FROM t", nil)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0].Int() != 1 {
		t.Fatalf("the RockStream directory after the refusal: %v, %v", res, err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	srv, err := lake.Open(lake.Config{Dir: lakeDir, Durability: storage.Relaxed})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := instance.Open(instance.Options{Storage: lakeDir, Relaxed: true}); errs.SQLState(err) != "42809" ||
		!strings.Contains(err.Error(), "holds a RockLake catalog") || !strings.Contains(err.Error(), "rockstream lake") {
		t.Fatalf("RockStream on a lake directory: %v", err)
	}
	srv, err = lake.Open(lake.Config{Dir: lakeDir, Durability: storage.Relaxed})
	if err != nil {
		t.Fatalf("reopening the lake: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
