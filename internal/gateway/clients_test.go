package gateway

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/lib/pq"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// The same client scenario runs against PostgreSQL and against RockStream
// through the gateway; the decoded Go values (and error codes) must be
// equal. The scenario covers DDL, parameterized DML through prepared
// statements, committed and rolled-back transactions, a view, errors that
// leave the session usable, and a round trip of every type in the text
// and binary formats.

// step is one statement of the scenario.
type step struct {
	sql  string
	args []any
}

var ts1 = time.Date(2026, 11, 30, 1, 2, 3, 456789000, time.UTC)

var scenarioSetup = []step{
	{sql: `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), qty bigint,
		ratio float8, ok bool, born date, at timestamp, atz timestamptz, dur interval, data bytea,
		code varchar(8), small smallint, f4 real)`},
	{sql: `INSERT INTO items VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		args: []any{1, "apple", "1.50", int64(10), 0.25, true, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), ts1, ts1,
			pgtype.Interval{Months: 14, Days: 3, Microseconds: 4005006, Valid: true}, []byte{0, 1, 255}, "ab", int16(-7), float32(1.5)}},
	{sql: `INSERT INTO items VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		args: []any{2, "pear", "12.25", int64(-3), math.Inf(-1), false, nil, nil, nil, nil, nil, nil, nil, nil}},
	{sql: `INSERT INTO items (id, name, price) VALUES ($1, $2, $3) RETURNING id, name, price * 2 AS double`,
		args: []any{3, "fig ✓ 'quoted'", "7.10"}},
}

var scenarioQueries = []step{
	{sql: "SELECT * FROM items ORDER BY id"},
	{sql: "SELECT id, name FROM items WHERE price > $1 ORDER BY id", args: []any{"2"}},
	{sql: "UPDATE items SET qty = qty + $1 WHERE id = $2 RETURNING id, qty", args: []any{int64(5), 1}},
	{sql: "SELECT count(*), sum(qty), avg(price) FROM items"},
	{sql: "SELECT 1/0"},
	{sql: "SELECT count(*) FROM items"},
	{sql: "SELECT * FROM nowhere"},
	{sql: "CREATE VIEW pricey AS SELECT id, name, price FROM items WHERE price > 5"},
	{sql: "SELECT * FROM pricey ORDER BY id"},
	{sql: "DELETE FROM items WHERE id = $1 RETURNING id, name", args: []any{3}},
	{sql: "SELECT $1::int4 IS NULL, $2::text", args: []any{nil, nil}},
}

// roundTrips are values of every type, sent as parameters and read back.
var roundTrips = []step{
	{sql: "SELECT $1::bool, $2::bool", args: []any{true, false}},
	{sql: "SELECT $1::int2, $2::int2", args: []any{int16(-32768), int16(32767)}},
	{sql: "SELECT $1::int4, $2::int4", args: []any{int32(math.MinInt32), int32(0)}},
	{sql: "SELECT $1::int8, $2::int8", args: []any{int64(math.MaxInt64), int64(-1)}},
	{sql: "SELECT $1::numeric, $2::numeric, $3::numeric(5,1)", args: []any{"-0.000123", "NaN", "1234.56"}},
	{sql: "SELECT $1::float4, $2::float4", args: []any{float32(1.5), float32(-0.1)}},
	{sql: "SELECT $1::float8, $2::float8, $3::float8", args: []any{0.1, -1e308, math.Inf(1)}},
	{sql: "SELECT $1::text, $2::text, $3::varchar(5)", args: []any{"héllo ✓", "", "abc"}},
	{sql: "SELECT $1::bytea, $2::bytea", args: []any{[]byte{0, 1, 2, 255}, []byte{}}},
	{sql: "SELECT $1::date", args: []any{time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)}},
	{sql: "SELECT $1::timestamp", args: []any{ts1}},
	{sql: "SELECT $1::timestamptz", args: []any{ts1.In(time.FixedZone("x", 5*3600+1800))}},
	{sql: "SELECT $1::interval", args: []any{pgtype.Interval{Months: -14, Days: 3, Microseconds: 4005006, Valid: true}}},
	{sql: "SELECT true, 1::int2, 2, 3::int8, 1.25::numeric(6,3), 1.5::float4, 2.5::float8, 'a'::text, 'b'::varchar(3), '\\x01'::bytea"},
	{sql: "SELECT '2026-01-02'::date, '2026-01-02 03:04:05.678'::timestamp, '2026-01-02 03:04:05+02'::timestamptz, '1 day 02:03:04'::interval"},
	{sql: "SELECT 'infinity'::timestamp, '-infinity'::date, 'NaN'::float8, '-0'::float8"},
	{sql: "SELECT ARRAY[1, 2, 3], ARRAY['a', NULL, 'c, d'], ARRAY[1.5, NULL]::numeric[], '{}'::int[]"},
	{sql: "SELECT $1::int8[], $2::text[]", args: []any{[]int64{1, -2}, []string{"x", "y z", `q"uote`}}},
}

// runScenario runs the scenario on conn and returns what it observed, one
// line per statement.
func runScenario(t *testing.T, conn *pgx.Conn) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var log []string
	run := func(s step) {
		log = append(log, s.sql+" => "+observe(ctx, conn, s))
	}
	for _, s := range scenarioSetup {
		run(s)
	}
	// A committed and a rolled-back transaction.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "INSERT INTO items (id, name) VALUES ($1, $2)", 10, "committed")
	log = append(log, fmt.Sprintf("tx insert: %v", errCode(err)))
	log = append(log, fmt.Sprintf("commit: %v", errCode(tx.Commit(ctx))))
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "DELETE FROM items WHERE id = $1", 10)
	log = append(log, fmt.Sprintf("tx delete: %v", errCode(err)))
	log = append(log, fmt.Sprintf("rollback: %v", errCode(tx.Rollback(ctx))))
	// An error inside a block aborts it until ROLLBACK.
	tx, err = conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "SELECT 1/0")
	log = append(log, fmt.Sprintf("error in block: %v", errCode(err)))
	_, err = tx.Exec(ctx, "SELECT 1")
	log = append(log, fmt.Sprintf("after error in block: %v", errCode(err)))
	log = append(log, fmt.Sprintf("rollback: %v", errCode(tx.Rollback(ctx))))
	for _, s := range scenarioQueries {
		run(s)
	}
	for _, s := range roundTrips {
		run(s)
	}
	return log
}

// observe runs one statement and describes its outcome: the normalized
// decoded values of its rows and its command tag, or its SQLSTATE.
func observe(ctx context.Context, conn *pgx.Conn, s step) string {
	rows, err := conn.Query(ctx, s.sql, s.args...)
	if err != nil {
		return "error " + errCode(err)
	}
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return "error " + errCode(err)
		}
		var cells []string
		for _, v := range vals {
			cells = append(cells, norm(v))
		}
		out = append(out, "("+strings.Join(cells, ", ")+")")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "error " + errCode(err)
	}
	var types []string
	for _, f := range rows.FieldDescriptions() {
		types = append(types, fmt.Sprintf("%s:%d/%d", f.Name, f.DataTypeOID, f.TypeModifier))
	}
	return fmt.Sprintf("[%s] %s %s", strings.Join(types, " "), strings.Join(out, " "), rows.CommandTag())
}

func errCode(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return err.Error()
}

// norm prints a decoded value so that equal values print equally.
func norm(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return "time:" + v.UTC().Format(time.RFC3339Nano)
	case []byte:
		return "bytes:" + hex.EncodeToString(v)
	case pgtype.Numeric:
		b, err := v.MarshalJSON()
		if err != nil {
			return "numeric:" + err.Error()
		}
		return fmt.Sprintf("numeric:%s/exp%d", b, v.Exp)
	case pgtype.Interval:
		return fmt.Sprintf("interval:%d/%d/%d", v.Months, v.Days, v.Microseconds)
	case pgtype.InfinityModifier:
		return "inf:" + v.String()
	}
	return fmt.Sprintf("%T:%v", v, v)
}

var allModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeSimpleProtocol,
}

func connectPgx(t *testing.T, dsn string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	cfg.RuntimeParams["timezone"] = "UTC"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestPgxMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			ts := startServer(t, Config{})
			want := runScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gw"), mode))
			got := runScenario(t, connectPgx(t, ts.dsn("tester", ""), mode))
			compareLogs(t, got, want)
		})
	}
}

func compareLogs(t *testing.T, got, want []string) {
	t.Helper()
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("step %d:\n got: %s\nwant: %s", i, g, w)
		}
	}
}

// TestLibPQMatchesPostgres runs a scenario through database/sql and
// lib/pq, which uses the extended protocol with unnamed statements and
// text values.
func TestLibPQMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	want := runSQLScenario(t, pgtest.NewDatabase(t, "gwpq"))
	got := runSQLScenario(t, ts.dsn("tester", ""))
	compareLogs(t, got, want)
}

func runSQLScenario(t *testing.T, dsn string) []string {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	var log []string
	exec := func(q string, args ...any) {
		res, err := db.ExecContext(ctx, q, args...)
		n := int64(-1)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		log = append(log, fmt.Sprintf("%s => %s %d", q, pqCode(err), n))
	}
	query := func(q string, args ...any) {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			log = append(log, fmt.Sprintf("%s => %s", q, pqCode(err)))
			return
		}
		defer rows.Close()
		cols, _ := rows.ColumnTypes()
		var desc []string
		for _, c := range cols {
			desc = append(desc, c.Name()+":"+c.DatabaseTypeName())
		}
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var cells []string
			for _, v := range vals {
				cells = append(cells, norm(v))
			}
			out = append(out, "("+strings.Join(cells, ", ")+")")
		}
		log = append(log, fmt.Sprintf("%s => %v %s %s", q, desc, strings.Join(out, " "), pqCode(rows.Err())))
	}
	exec("CREATE TABLE t (id int PRIMARY KEY, name text, amount numeric(8,2), at timestamptz, flag bool, raw bytea)")
	stmt, err := db.PrepareContext(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		_, err := stmt.ExecContext(ctx, i, fmt.Sprintf("row %d", i), fmt.Sprintf("%d.5", i), ts1.Add(time.Duration(i)*time.Hour), i%2 == 0, []byte{byte(i), 0})
		log = append(log, fmt.Sprintf("prepared insert %d: %s", i, pqCode(err)))
	}
	stmt.Close()
	exec("INSERT INTO t VALUES (1, 'dup', 0, NULL, NULL, NULL)")
	query("SELECT * FROM t ORDER BY id")
	query("SELECT name, amount FROM t WHERE id >= $1 AND flag = $2 ORDER BY id", 1, true)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(ctx, "UPDATE t SET amount = amount * 2 WHERE id = $1", 2)
	log = append(log, "tx update: "+pqCode(err))
	log = append(log, "commit: "+pqCode(tx.Commit()))
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM t")
	log = append(log, "tx delete: "+pqCode(err))
	log = append(log, "rollback: "+pqCode(tx.Rollback()))
	exec("CREATE VIEW big AS SELECT id, amount FROM t WHERE amount > 2")
	query("SELECT * FROM big ORDER BY id")
	query("SELECT 1/0")
	query("SELECT count(*) FROM t")
	query("SELECT $1::int8 + 1, $2::text || '!', $3::float8", int64(41), "hi", 0.1)
	return log
}

func pqCode(err error) string {
	if err == nil {
		return "ok"
	}
	type coded interface{ SQLState() string }
	var c coded
	if errors.As(err, &c) {
		return c.SQLState()
	}
	return err.Error()
}

// pgxBulkScenario uses pgx's binary COPY FROM (CopyFrom) and a pipelined
// batch (SendBatch), and returns what it observed.
func pgxBulkScenario(t *testing.T, conn *pgx.Conn) []string {
	ctx := context.Background()
	var log []string
	if _, err := conn.Exec(ctx, "CREATE TABLE bulk (id int PRIMARY KEY, name text, amount numeric(10,2), at timestamptz, ok bool, raw bytea, f float8)"); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for i := range 300 {
		rows = append(rows, []any{i, fmt.Sprintf("name %d ✓", i), fmt.Sprintf("%d.%02d", i, i%100), ts1.Add(time.Duration(i) * time.Minute), i%3 == 0, []byte{byte(i)}, float64(i) / 7})
	}
	rows = append(rows, []any{1000, nil, nil, nil, nil, nil, nil})
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"bulk"}, []string{"id", "name", "amount", "at", "ok", "raw", "f"}, pgx.CopyFromRows(rows))
	log = append(log, fmt.Sprintf("copy from: %d %s", n, errCode(err)))
	// A duplicate key fails the whole COPY.
	n, err = conn.CopyFrom(ctx, pgx.Identifier{"bulk"}, []string{"id"}, pgx.CopyFromRows([][]any{{5000}, {1}}))
	log = append(log, fmt.Sprintf("copy duplicate: %d %s", n, errCode(err)))

	b := &pgx.Batch{}
	b.Queue("SELECT count(*), sum(amount), min(at), max(name) FROM bulk")
	b.Queue("UPDATE bulk SET ok = NOT ok WHERE id < $1", 10)
	b.Queue("SELECT id, ok, f FROM bulk WHERE id < $1 ORDER BY id", 4)
	b.Queue("INSERT INTO bulk (id) VALUES ($1) RETURNING id", 2000)
	br := conn.SendBatch(ctx, b)
	for i := 0; i < b.Len(); i++ {
		r, err := br.Query()
		if err != nil {
			log = append(log, "batch error "+errCode(err))
			continue
		}
		var out []string
		for r.Next() {
			vals, err := r.Values()
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for _, v := range vals {
				cells = append(cells, norm(v))
			}
			out = append(out, "("+strings.Join(cells, ", ")+")")
		}
		r.Close()
		log = append(log, fmt.Sprintf("batch %d: %s %s %s", i, strings.Join(out, " "), r.CommandTag(), errCode(r.Err())))
	}
	log = append(log, "batch close: "+errCode(br.Close()))
	return log
}

func TestPgxBulkMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			ts := startServer(t, Config{})
			want := pgxBulkScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gwbulk"), mode))
			got := pgxBulkScenario(t, connectPgx(t, ts.dsn("tester", ""), mode))
			compareLogs(t, got, want)
		})
	}
}
