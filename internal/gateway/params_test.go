package gateway

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// paramsTable has a column of every type a prepared INSERT's parameters
// are tested with.
const paramsTable = `CREATE TABLE p (id int PRIMARY KEY, i2 smallint, i4 int, i8 bigint,
	n numeric(12,4), f4 real, f8 double precision, b boolean, t text NOT NULL DEFAULT 'dflt',
	vc varchar(5), by bytea, d date, ts timestamp, tz timestamptz, iv interval, ai int[], at text[])`

const paramsInsert = "INSERT INTO p VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"

// paramsRows are rows for paramsInsert, chosen so that a value that went
// through text on its way to the table would show: float8s whose
// shortest text needs 17 digits, the smallest subnormal, the largest
// finite value and negative zero; times with microseconds, also far from
// today; intervals of months, days and microseconds.
func paramsRows() [][]any {
	zone := time.FixedZone("", -(9*3600 + 30*60))
	return [][]any{
		{int32(1), int16(-32768), int32(math.MaxInt32), int64(math.MinInt64), "12345678.1234", float32(0.1), 0.1 + 0.2,
			true, "one", "abcde", []byte{0, 1, 0xfe, 0xff}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 12, 1, 12, 34, 56, 123456000, time.UTC), time.Date(2026, 12, 1, 12, 34, 56, 999999000, zone),
			pgtype.Interval{Months: 14, Days: -3, Microseconds: 3723000001, Valid: true}, []int32{1, -2, 3}, []string{"a", "b,c", "", `q"uote`}},
		{int32(2), int16(32767), int32(math.MinInt32), int64(math.MaxInt64), 0.000049, float32(math.MaxFloat32), 5e-324,
			false, "", "", []byte{}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(1999, 12, 31, 23, 59, 59, 1000, time.UTC), time.Date(1901, 2, 3, 4, 5, 6, 7000, time.UTC),
			time.Duration(-1), []int32{}, []string{}},
		{int32(3), nil, nil, nil, nil, float32(math.SmallestNonzeroFloat32), math.MaxFloat64,
			nil, "three", nil, nil, nil, nil, nil, nil, nil, nil},
		{int32(4), int16(0), int32(0), int64(0), -1.5, float32(math.Copysign(0, -1)), math.Copysign(0, -1),
			true, "four", "ab", []byte("x"), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
			time.Date(2262, 4, 11, 23, 47, 16, 854775000, time.UTC), time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC),
			pgtype.Interval{Microseconds: -1, Valid: true}, []int32{7}, []string{"ü"}},
		{int32(5), int16(5), int32(5), int64(5), "NaN", float32(math.Inf(-1)), math.NaN(),
			false, "five", nil, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC),
			pgtype.Interval{Days: 1, Valid: true}, nil, nil},
		{int32(6), int16(6), int32(6), int64(6), 1 / 3.0, float32(1) / 3, 1 / 3.0,
			true, "six", "six", []byte("six"), time.Date(2026, 6, 6, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 6, 6, 6, 6, 6, 6000, time.UTC), time.Date(2026, 6, 6, 6, 6, 6, 6000, time.UTC),
			pgtype.Interval{Months: -1, Valid: true}, []int32{6}, []string{"six"}},
	}
}

// paramsScenario inserts rows through prepared INSERTs, good and bad, in
// single executions, transactions and batches, and returns what it
// observed, the table's rows last.
func paramsScenario(t *testing.T, conn *pgx.Conn) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var log []string
	exec := func(q string, args ...any) {
		tag, err := conn.Exec(ctx, q, args...)
		log = append(log, fmt.Sprintf("%s %v => %s %s", q, args, tag, errCode(err)))
	}
	exec(paramsTable)
	for _, row := range paramsRows() {
		exec(paramsInsert, row...)
	}
	// Several rows of parameters and literals, DEFAULT, a column list.
	exec("INSERT INTO p (id, i4, t) VALUES ($1, $2, 'lit'), ($3, DEFAULT, $4), (9, 9, DEFAULT)", 7, 70, 8, "eight")
	exec("INSERT INTO p (t, id, f8, n) VALUES ($2, $1, $3::float8, 1.5)", 10, "ten", 2.5)
	// Assignment casts and their checks.
	exec("INSERT INTO p (id, i2, i4, n) VALUES ($1, $2::int8, $3::float8, $4::float8)", 11, 300, 2.5, 0.1+0.2)
	exec("INSERT INTO p (id, i2) VALUES ($1, $2::int4)", 12, 70000)
	exec("INSERT INTO p (id, i8) VALUES ($1, $2::float8)", 13, math.NaN())
	exec("INSERT INTO p (id, i4) VALUES ($1, $2::float8)", 14, math.Inf(1))
	exec("INSERT INTO p (id, n) VALUES ($1, $2)", 15, "123456789")
	exec("INSERT INTO p (id, vc) VALUES ($1, $2)", 16, "toolong")
	exec("INSERT INTO p (id, t) VALUES ($1, $2)", 17, nil)
	exec("INSERT INTO p (id) VALUES ($1), ($2)", 18, 1)
	exec("INSERT INTO p (id, i4) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET i4 = EXCLUDED.i4", 2, 200)
	exec("INSERT INTO p (id, i4) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET i4 = EXCLUDED.i4", 1, 100)
	// The same statement, each time with other values, in a transaction.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 30; i++ {
		_, err := tx.Exec(ctx, "INSERT INTO p (id, i8, f8, tz) VALUES ($1, $2, $3, $4)", i, int64(i)<<40, float64(i)/7, time.Date(2026, 1, 1, 0, 0, 0, i*1000, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = tx.Exec(ctx, "INSERT INTO p (id, i8, f8, tz) VALUES ($1, $2, $3, $4)", 20, 0, 0.0, time.Now())
	log = append(log, "duplicate in block: "+errCode(err))
	log = append(log, "commit: "+errCode(tx.Commit(ctx)))
	// A batch runs as one transaction: a failing row leaves none behind;
	// a good batch commits all of its rows.
	for _, bad := range []bool{true, false} {
		var batch pgx.Batch
		for i := 30; i < 40; i++ {
			v := int64(i)
			if bad && i == 35 {
				v = 1 << 40
			}
			batch.Queue("INSERT INTO p (id, i4) VALUES ($1, $2::int8)", i, v)
		}
		log = append(log, fmt.Sprintf("batch (bad %v): %s", bad, errCode(conn.SendBatch(ctx, &batch).Close())))
	}
	log = append(log, tableRows(t, conn, "SELECT * FROM p ORDER BY id")...)
	// Type modifiers round what the parameters give.
	exec("CREATE TABLE q (id int PRIMARY KEY, ts3 timestamp(3), tz0 timestamptz(0), iv1 interval(1), n2 numeric(5,2), v3 varchar(3))")
	at := time.Date(2026, 12, 1, 12, 34, 56, 987654000, time.UTC)
	exec("INSERT INTO q VALUES ($1, $2, $3, $4, $5, $6)", 1, at, at, 1500*time.Millisecond+5*time.Microsecond, 2.345, "ab ")
	exec("INSERT INTO q VALUES ($1, $2, $3, $4, $5, $6)", 2, at.Add(-500*time.Microsecond), at.Add(12*time.Millisecond), time.Duration(-50)*time.Microsecond, "-2.355", "abc   ")
	exec("INSERT INTO q VALUES ($1, $2, $3, $4, $5, $6)", 3, nil, nil, nil, 999.995, nil)
	log = append(log, tableRows(t, conn, "SELECT * FROM q ORDER BY id")...)
	// The statement binds again once the table changes: its parameter
	// keeps its type, assigned to the new column's.
	exec("INSERT INTO p (id, i4) VALUES ($1, $2)", 50, 5)
	exec("DROP TABLE p")
	exec("CREATE TABLE p (id int PRIMARY KEY, t text DEFAULT 'new', i4 smallint)")
	exec("INSERT INTO p (id, i4) VALUES ($1, $2)", 51, 5)
	exec("INSERT INTO p (id, i4) VALUES ($1, $2)", 52, 70000)
	exec("INSERT INTO p (id, i4) VALUES ($1, $2)", 53, -6)
	return append(log, tableRows(t, conn, "SELECT id, t, i4 FROM p ORDER BY id")...)
}

// tableRows returns the rows of query, normalized.
func tableRows(t *testing.T, conn *pgx.Conn, query string) []string {
	ctx := context.Background()
	var log []string
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		var cells []string
		for _, v := range vals {
			cells = append(cells, norm(v))
		}
		log = append(log, strings.Join(cells, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestPreparedInsertMatchesPostgres inserts values of every column type
// through prepared INSERTs in each of pgx's modes (binary parameters in
// the cached and described modes, text in the others) and compares what
// each step returns and what the table holds with PostgreSQL.
func TestPreparedInsertMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			ts := startServer(t, Config{})
			want := paramsScenario(t, connectPgx(t, pgtest.NewDatabase(t, "gwparams"), mode))
			got := paramsScenario(t, connectPgx(t, ts.dsn("tester", ""), mode))
			compareLogs(t, got, want)
		})
	}
}

// TestBinaryParamsKeepBits checks that binary float8 and timestamptz
// parameters reach the table bit for bit: the values read back in
// binary are the ones sent, whatever their text would have been.
func TestBinaryParamsKeepBits(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE bits (id int PRIMARY KEY, f double precision, r real, tz timestamptz)"); err != nil {
		t.Fatal(err)
	}
	floats := []float64{0.1 + 0.2, 5e-324, math.MaxFloat64, math.Copysign(0, -1), 1 / 3.0, math.Nextafter(1, 2), -math.Nextafter(1e-300, 0)}
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, f := range floats {
		tz := base.Add(time.Duration(i*1001+1) * time.Microsecond)
		if _, err := conn.Exec(ctx, "INSERT INTO bits VALUES ($1, $2, $3, $4)", i, f, float32(f), tz); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range floats {
		var got float64
		var r float32
		var tz time.Time
		if err := conn.QueryRow(ctx, "SELECT f, r, tz FROM bits WHERE id = $1", i).Scan(&got, &r, &tz); err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(f) || math.Float32bits(r) != math.Float32bits(float32(f)) {
			t.Errorf("row %d: float8 %v (%#x), real %v; sent %v (%#x), %v", i, got, math.Float64bits(got), r, f, math.Float64bits(f), float32(f))
		}
		if want := base.Add(time.Duration(i*1001+1) * time.Microsecond); !tz.Equal(want) {
			t.Errorf("row %d: timestamptz %v, sent %v", i, tz, want)
		}
	}
}

// paramsCases are raw exchanges of prepared INSERTs with wrong binary or
// text parameters, alone and among good executions before one Sync.
var paramsCases = []struct {
	name string
	ex   exchange
}{
	{"int4 of three bytes", paramsExchange(bindParams([]int16{1, 1}, []byte{0, 0, 1}, int4Bytes(1)))},
	{"int4 of five bytes", paramsExchange(bindParams([]int16{1, 1}, []byte{0, 0, 0, 0, 1}, int4Bytes(1)))},
	{"numeric digit past 9999", paramsExchange(bindParams([]int16{1, 1}, int4Bytes(1), numericBytes(0, 0, 10000)))},
	{"numeric of bad sign", paramsExchange(bindParams([]int16{1, 1}, int4Bytes(1), numericBytes(0, 0x1234, 1)))},
	{"text not an integer", paramsExchange(bindParams(nil, []byte("12x"), []byte("1.5")))},
	{"text not a number", paramsExchange(bindParams(nil, []byte("1"), []byte("1.5.")))},
	{"too few parameters", paramsExchange(&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{[]byte("1")}})},
	{"too many parameters", paramsExchange(bindParams(nil, []byte("1"), []byte("1"), []byte("1")))},
	{"bad execution among good ones", paramsExchange(
		bindParams([]int16{1, 1}, int4Bytes(1), numericBytes(0, 0, 5)),
		bindParams([]int16{1, 1}, int4Bytes(2), []byte{1}),
		bindParams([]int16{1, 1}, int4Bytes(3), numericBytes(0, 0, 7)),
	)},
	{"good executions before Sync", paramsExchange(
		bindParams([]int16{1, 1}, int4Bytes(1), numericBytes(0, 0, 5)),
		bindParams(nil, []byte("2"), []byte("-0.25")),
		bindParams([]int16{1, 0}, int4Bytes(3), []byte("1e3")),
	)},
	{"duplicate key among good ones", paramsExchange(
		bindParams(nil, []byte("4"), []byte("1")),
		bindParams(nil, []byte("4"), []byte("2")),
	)},
}

// paramsExchange prepares "ins", an INSERT of two parameters declared
// int4 and numeric into table pr, runs the binds given, each followed by
// Execute, before one Sync, then lists the table and empties it.
func paramsExchange(binds ...*pgproto3.Bind) exchange {
	run := []pgproto3.FrontendMessage{&pgproto3.Parse{Name: "ins", Query: "INSERT INTO pr VALUES ($1, $2)", ParameterOIDs: []uint32{23, 1700}}}
	for _, b := range binds {
		run = append(run, b, &pgproto3.Execute{})
	}
	run = append(run, &pgproto3.Sync{})
	return exchange{run,
		{rawQuery("SELECT * FROM pr ORDER BY k")},
		{rawQuery("DELETE FROM pr")},
		{&pgproto3.Close{ObjectType: 'S', Name: "ins"}, &pgproto3.Sync{}},
	}
}

func bindParams(formats []int16, params ...[]byte) *pgproto3.Bind {
	return &pgproto3.Bind{PreparedStatement: "ins", ParameterFormatCodes: formats, Parameters: params}
}

func int4Bytes(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// numericBytes is the binary form of a numeric of one base-10000 digit.
func numericBytes(weight int16, sign uint16, digit uint16) []byte {
	b := binary.BigEndian.AppendUint16(nil, 1) // ndigits
	b = binary.BigEndian.AppendUint16(b, uint16(weight))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, 0) // dscale
	return binary.BigEndian.AppendUint16(b, digit)
}

func TestPreparedInsertProtocolMatchesPostgres(t *testing.T) {
	pgtest.Require(t)
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwparamsp"))
	pgConn := dialRaw(t, addr, map[string]string{"user": "postgres", "database": db})
	rsConn := dialRaw(t, ts.addr, nil)
	for _, r := range []*rawConn{pgConn, rsConn} {
		r.send(rawQuery("CREATE TABLE pr (k int PRIMARY KEY, v numeric(6,2))"))
		if tr := r.until(); strings.Contains(strings.Join(tr, " "), "Error") {
			t.Fatalf("setup: %v", tr)
		}
	}
	for _, tc := range paramsCases {
		t.Run(tc.name, func(t *testing.T) {
			want := runExchange(t, pgConn, tc.ex)
			got := runExchange(t, rsConn, tc.ex)
			compareLogs(t, got, want)
		})
	}
}
