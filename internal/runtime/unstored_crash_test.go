package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/storage"
)

// TestUnstoredTableCrash crashes a Pebble store under an unmaterialized
// table whose log syncs start failing: after recovery from what reached
// the disk, the views over the table hold exactly the acknowledged
// inserts, the count of rows taken agrees with them, and inserts after
// the recovery reach the views.
func TestUnstoredTableCrash(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fault := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if slices.Contains([]errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData}, op.Kind) && strings.HasSuffix(op.Path, ".log") {
			return errorfs.ErrInjected
		}
		return nil
	})}
	st, err := storage.Open(storage.Options{Dir: "db", FS: errorfs.Wrap(mem, fault)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	exec := func(s *Session, q string) (string, error) {
		res, err := s.Exec(ctx, q, nil)
		if err != nil {
			return "", err
		}
		return formatRows(res), nil
	}
	for _, q := range []string{
		"CREATE TABLE ev (g int, v int) APPEND ONLY WITH (materialized = false)",
		"CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, sum(v) AS s FROM ev GROUP BY g",
	} {
		if _, err := exec(s, q); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= 5; k++ {
		if _, err := exec(s, fmt.Sprintf("INSERT INTO ev VALUES (%d, %d)", k%2, k)); err != nil {
			t.Fatal(err)
		}
	}
	fault.On()
	if _, err := exec(s, "INSERT INTO ev VALUES (0, 100), (1, 100)"); errs.SQLState(err) != "08007" {
		t.Fatalf("insert while the log's fsync fails: %v, want SQLSTATE 08007 (outcome unknown)", err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	fault.Off()
	s.Close()
	_ = e.Close()

	st2, err := storage.Open(storage.Options{Dir: "db", FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := Open(st2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := e2.NewSession()
	defer s2.Close()
	if got, err := exec(s2, "SELECT * FROM per_g ORDER BY g"); err != nil || got != "0|2|6\n1|3|9\n" {
		t.Fatalf("view after the crash: %q, %v; want the five acknowledged rows", got, err)
	}
	if _, err := exec(s2, "CREATE MATERIALIZED VIEW late AS SELECT g FROM ev"); errs.CodeOf(err) != errs.PrerequisiteState || !strings.Contains(err.Error(), "has taken 5 already") {
		t.Fatalf("late view after the crash: %v, want 55000 saying the table has taken 5 rows", err)
	}
	if _, err := exec(s2, "INSERT INTO ev VALUES (1, 10)"); err != nil {
		t.Fatalf("writing after recovery: %v", err)
	}
	if got, err := exec(s2, "SELECT * FROM per_g ORDER BY g"); err != nil || got != "0|2|6\n1|4|19\n" {
		t.Fatalf("view after an insert after recovery: %q, %v", got, err)
	}
}
