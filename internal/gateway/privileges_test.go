package gateway

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPrivilegesOverTheWire: a client logged in as a role without
// SUPERUSER gets PostgreSQL's refusals, in the extended protocol too, and
// what it was granted; is_superuser reports off for it.
func TestPrivilegesOverTheWire(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{})
	admin := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer admin.Close(ctx)
	for _, q := range []string{"CREATE ROLE bob LOGIN", "CREATE TABLE t (k int)", "INSERT INTO t VALUES (1)", "CREATE TABLE u (k int)"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		cfg, err := pgx.ParseConfig(ts.dsn("bob", ""))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		bob, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v := bob.PgConn().ParameterStatus("is_superuser"); v != "off" {
			t.Errorf("is_superuser = %q for bob", v)
		}
		for q, msg := range map[string]string{
			"SELECT * FROM t":                      "permission denied for table t",
			"INSERT INTO u VALUES ($1)":            "permission denied for table u",
			"DROP TABLE t":                         "must be owner of table t",
			"CREATE TABLE x (k int)":               "permission denied for schema public",
			"CREATE ROLE eve SUPERUSER":            "must be superuser to create superusers",
			"ALTER ROLE bob SUPERUSER":             "must be superuser to alter superuser roles or change superuser attribute",
			"SET SESSION AUTHORIZATION rockstream": "permission denied to set session authorization",
		} {
			var args []any
			if mode == pgx.QueryExecModeExec && q == "INSERT INTO u VALUES ($1)" {
				args = []any{1}
			} else if q == "INSERT INTO u VALUES ($1)" {
				q, args = "INSERT INTO u VALUES (1)", nil
			}
			_, err := bob.Exec(ctx, q, args...)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42501" || pe.Message != msg {
				t.Errorf("%v %s: %v, want 42501 %s", mode, q, err, msg)
			}
		}
		bob.Close(ctx)
	}
	if _, err := admin.Exec(ctx, "GRANT SELECT ON t TO bob"); err != nil {
		t.Fatal(err)
	}
	cfg, _ := pgx.ParseConfig(ts.dsn("bob", ""))
	bob, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close(ctx)
	var n int
	if err := bob.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("bob reads t after GRANT: %d, %v", n, err)
	}
}

// TestStartupCannotChooseRole: a startup parameter cannot make a session
// another role than the one it authenticated as.
func TestStartupCannotChooseRole(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Config{})
	admin := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE ROLE bob LOGIN"); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"-c role=rockstream", "-c session_authorization=rockstream"} {
		cfg, err := pgx.ParseConfig(ts.dsn("bob", ""))
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["options"] = opt
		bob, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			continue // refused at startup
		}
		var user string
		if err := bob.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != "bob" {
			t.Errorf("%s: current_user %q, %v", opt, user, err)
		}
		bob.Close(ctx)
	}
}
