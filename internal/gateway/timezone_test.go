package gateway

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestStartupTimeZoneMatchesPostgres logs in as a JDBC client in a
// non-UTC JVM does, with TimeZone=Europe/Berlin in the startup message,
// and compares what the session shows with PostgreSQL: the setting and
// its ParameterStatus, timestamptz text in and out, the binary format
// (an instant, whatever the zone), and a change of zone with SET.
func TestStartupTimeZoneMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			ts := startServer(t, Config{})
			want := zoneScenario(t, pgtest.NewDatabase(t, "gw"), mode)
			got := zoneScenario(t, ts.dsn("tester", ""), mode)
			compareLogs(t, got, want)
		})
	}
	// An unknown zone refuses the login, as PostgreSQL does.
	ts := startServer(t, Config{})
	for _, dsn := range []string{pgtest.NewDatabase(t, "gw"), ts.dsn("tester", "")} {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["TimeZone"] = "Mars/Base"
		_, err = pgx.ConnectConfig(context.Background(), cfg)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "22023" || pe.Message != `invalid value for parameter "TimeZone": "Mars/Base"` {
			t.Errorf("login with TimeZone=Mars/Base: %v", err)
		}
	}
}

func zoneScenario(t *testing.T, dsn string, mode pgx.QueryExecMode) []string {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	cfg.RuntimeParams["TimeZone"] = "Europe/Berlin"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var log []string
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	logf("ParameterStatus TimeZone=%s", conn.PgConn().ParameterStatus("TimeZone"))
	text := func(q string, args ...any) {
		var s string
		if err := conn.QueryRow(ctx, q, args...).Scan(&s); err != nil {
			logf("%s: error %v", q, err)
			return
		}
		logf("%s: %s", q, s)
	}
	text("SHOW TimeZone")
	for _, q := range []string{
		"CREATE TABLE zt (id int PRIMARY KEY, ts timestamptz)",
		"INSERT INTO zt VALUES (1, '2026-03-29 02:30'), (2, '2026-10-25 02:30'), (3, '2026-07-01 12:00+00')",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(q, ": ", err)
		}
	}
	text("SELECT string_agg(ts::text, ', ' ORDER BY id) FROM zt")
	text("SELECT string_agg(to_char(ts, 'YYYY-MM-DD HH24:MI TZ'), ', ' ORDER BY id) FROM zt")
	rows, err := conn.Query(ctx, "SELECT id, ts FROM zt ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		logf("row %d: %s", id, at.UTC().Format(time.RFC3339))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// A parameter sent as text without an offset is Berlin time.
	text("SELECT ($1::text)::timestamptz::text", "2026-12-24 18:00")
	if _, err := conn.Exec(ctx, "SET TIME ZONE 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	logf("after SET: ParameterStatus TimeZone=%s", conn.PgConn().ParameterStatus("TimeZone"))
	text("SELECT string_agg(ts::text, ', ' ORDER BY id) FROM zt")
	if _, err := conn.Exec(ctx, "SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE"); err != nil {
		t.Fatal(err)
	}
	logf("after SET INTERVAL: ParameterStatus TimeZone=%s", conn.PgConn().ParameterStatus("TimeZone"))
	text("SELECT string_agg(ts::text, ', ' ORDER BY id) FROM zt")
	return log
}
