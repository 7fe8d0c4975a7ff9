package gateway

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestTimeTZWireMatchesPostgres compares time with time zone over the
// wire with PostgreSQL through pgx: the row description (OID 1266, size
// 12, the typmod of timetz(p)), results in text and in binary (8 bytes of
// microseconds and 4 of seconds west of UTC), a parameter sent in binary,
// an array in binary, and the simple protocol's text.
func TestTimeTZWireMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	want := timeTZWireScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gw"), pgx.QueryExecModeCacheStatement))
	got := timeTZWireScenario(t, connectPgx(t, ts.dsn("tester", ""), pgx.QueryExecModeCacheStatement))
	compareLogs(t, got, want)
	for _, l := range got {
		t.Log(l)
	}
}

func timeTZWireScenario(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	ctx := context.Background()
	var log []string
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	for _, q := range []string{
		"CREATE TABLE wz (id int PRIMARY KEY, at timetz, at2 timetz(2))",
		"INSERT INTO wz VALUES (1, '10:30:15.123456+02', '10:30:15.125+02'), (2, '23:59:59.999999-05:30', '00:00+14'), (3, NULL, '24:00-12'), (4, '09:30+01', NULL)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(q, ": ", err)
		}
	}
	// A timetz parameter in binary: 04:05:06.5 at +05:45.
	param := timeTZBinary((4*3600+5*60+6)*1_000_000+500_000, -(5*3600 + 45*60))
	queries := []struct {
		sql    string
		params [][]byte
	}{
		{"SELECT id, at, at2 FROM wz ORDER BY at, id", nil},
		{"SELECT $1::timetz, $1::timetz AT TIME ZONE 'UTC', $1::timetz::time", [][]byte{param}},
		{"SELECT ARRAY[at, at2] FROM wz WHERE id = 1", nil},
		{"SELECT at FROM wz WHERE at = $1", [][]byte{timeTZBinary((9*3600+30*60)*1_000_000, -3600)}},
	}
	for _, q := range queries {
		for _, format := range []int16{pgx.TextFormatCode, pgx.BinaryFormatCode} {
			paramFormats := make([]int16, len(q.params))
			var paramOIDs []uint32
			for i := range paramFormats {
				paramFormats[i] = pgx.BinaryFormatCode
				paramOIDs = append(paramOIDs, 1266)
			}
			res := conn.PgConn().ExecParams(ctx, q.sql, q.params, paramOIDs, paramFormats, []int16{format}).Read()
			if res.Err != nil {
				logf("%s (format %d): error %v", q.sql, format, res.Err)
				continue
			}
			for _, fd := range res.FieldDescriptions {
				logf("%s: column %s oid %d size %d typmod %d format %d", q.sql, fd.Name, fd.DataTypeOID, fd.DataTypeSize, fd.TypeModifier, fd.Format)
			}
			for _, row := range res.Rows {
				var vals []string
				for _, v := range row {
					if v == nil {
						vals = append(vals, "NULL")
					} else if format == pgx.BinaryFormatCode {
						vals = append(vals, fmt.Sprintf("%x", v))
					} else {
						vals = append(vals, string(v))
					}
				}
				logf("%s (format %d): %v", q.sql, format, vals)
			}
		}
	}
	// The simple protocol: text, and the session's zone for input without
	// an offset.
	simple := func(sql string) {
		rows, err := conn.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			logf("%s: error %v", sql, pgconnCode(err))
			return
		}
		for _, r := range rows {
			for _, row := range r.Rows {
				var vals []string
				for _, v := range row {
					vals = append(vals, string(v))
				}
				logf("%s: %v", sql, vals)
			}
		}
	}
	simple("SET TimeZone = 'Asia/Kathmandu'")
	simple("SELECT '10:30'::timetz, pg_typeof(current_time)::text, '2026-06-01 12:00+00'::timestamptz::timetz")
	simple("SET TimeZone = 'UTC'")
	simple("SELECT '10:30 +16'::timetz")
	simple("SELECT at FROM wz WHERE at = '10:30:15.123456+02:00'")
	return log
}

// timeTZBinary is timetz_send's format: microseconds since midnight,
// then the zone in seconds west of UTC.
func timeTZBinary(micros int64, zoneWest int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(micros)), uint32(zoneWest))
}

func pgconnCode(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code
	}
	return err.Error()
}
