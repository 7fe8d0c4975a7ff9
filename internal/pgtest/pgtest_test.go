package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { Main(m) }

// query returns the single text value sql yields on dsn.
func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %v", sql, res)
	}
	return string(res[0].Rows[0][0])
}

func TestServerSettings(t *testing.T) {
	dsn := DSN(t)
	for _, c := range []struct{ sql, want string }{
		{"SHOW server_encoding", "UTF8"},
		{"SHOW lc_collate", "C.UTF-8"},
		{"SHOW fsync", "off"},
		{"SHOW wal_level", "logical"},
		{"SHOW TimeZone", "UTC"},
		{"SELECT current_setting('server_version_num')::int / 10000 >= 15", "t"},
		// C collation: bytewise order, upper case before lower case.
		{"SELECT string_agg(x, '' ORDER BY x) FROM (VALUES ('b'), ('B'), ('a'), ('é')) v(x)", "Bab\u00e9"},
	} {
		if got := query(t, dsn, c.sql); got != c.want {
			t.Errorf("%s = %q, want %q", c.sql, got, c.want)
		}
	}
}

func TestSharedAcrossTests(t *testing.T) {
	a, b := DSN(t), DSN(t)
	if a != b {
		t.Fatalf("two servers in one binary: %s and %s", a, b)
	}
}

func TestNewDatabase(t *testing.T) {
	var first string
	t.Run("create", func(t *testing.T) {
		first = NewDatabase(t, "pgtest")
		if got := query(t, first, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"); got != "0" {
			t.Fatalf("fresh database has %s tables", got)
		}
		query(t, first, "SELECT 1 FROM (SELECT 1) s")
	})
	second := NewDatabase(t, "pgtest")
	if first == second {
		t.Fatalf("NewDatabase returned %s twice", first)
	}
	// The first subtest's database was dropped when it ended.
	got := query(t, DSN(t), "SELECT count(*) FROM pg_database WHERE datname LIKE 'pgtest\\_%'")
	if got != "1" {
		t.Fatalf("%s pgtest databases exist, want 1 (the first should have been dropped)", got)
	}
}

func TestUnavailable(t *testing.T) {
	t.Setenv(EnvBin, t.TempDir())
	if Available() {
		t.Fatal("Available() with an empty binary directory")
	}
	if r := unavailableReason(); r == "" {
		t.Fatal("no reason given")
	}
}
