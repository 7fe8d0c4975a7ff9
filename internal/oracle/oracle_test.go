package oracle

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// maxFindings bounds the findings reported per script: after the first
// disagreements, later ones are mostly their consequences.
const maxFindings = 25

// scriptsFlag selects the scripts TestScripts runs; point it at a file to
// run a script of your own (a reproduction printed by TestRandomViews,
// say).
var scriptsFlag = flag.String("oracle.scripts", filepath.Join("testdata", "*.sql"), "glob of the oracle scripts to run")

// scriptFiles returns the scripts -oracle.scripts selects.
func scriptFiles(t *testing.T) []string {
	files, err := filepath.Glob(*scriptsFlag)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts match %s", *scriptsFlag)
	}
	sort.Strings(files)
	return files
}

// newPostgres returns a Postgres engine on a fresh database.
func newPostgres(t testing.TB, name string) *Postgres {
	t.Helper()
	dsn := pgtest.NewDatabase(t, "oracle")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := ConnectPostgres(ctx, name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// schemaSeq numbers the schemas newPostgresIn creates.
var schemaSeq atomic.Int64

// newPostgresIn returns a Postgres engine confined to a new schema of the
// database at dsn: cheaper than a database of its own.
func newPostgresIn(t testing.TB, dsn, name string) *Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	schema := fmt.Sprintf("s%d", schemaSeq.Add(1))
	admin, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema).ReadAll(); err != nil {
		t.Fatal(err)
	}
	p, err := ConnectPostgres(ctx, name, dsn+"&search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// newRockStream returns a fresh RockStream engine.
func newRockStream(t testing.TB) *RockStream {
	t.Helper()
	r, err := OpenRockStream(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// runScript runs the script at path on PostgreSQL and sut and reports
// every finding as a test error.
func runScript(t *testing.T, path string, sut Engine, skipEngineOnly bool) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := ParseScript(path, string(text))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{
		Ref:            newPostgres(t, "postgres"),
		SUT:            sut,
		Source:         path,
		Strict:         true,
		SkipEngineOnly: skipEngineOnly,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fs, err := r.Run(ctx, stmts, maxFindings)
	for _, f := range fs {
		t.Errorf("%s", f)
	}
	if len(fs) >= maxFindings {
		t.Errorf("stopped after %d findings", len(fs))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestScripts runs every script in testdata on RockStream and compares it
// with PostgreSQL after every statement.
func TestScripts(t *testing.T) {
	pgtest.Require(t)
	for _, path := range scriptFiles(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScript(t, path, newRockStream(t), false)
		})
	}
}

// TestScriptsPostgresSelf runs every script with PostgreSQL on both sides.
// It checks the harness (every comparison must agree with itself) and the
// scripts (every statement PostgreSQL rejects must be marked), without
// depending on the engine.
func TestScriptsPostgresSelf(t *testing.T) {
	pgtest.Require(t)
	for _, path := range scriptFiles(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScript(t, path, newPostgres(t, "postgres-b"), true)
		})
	}
}
