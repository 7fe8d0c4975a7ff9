package lake

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/internal/storage"
)

var (
	benchTables = flag.Int("lake.bench.tables", 100, "tables in the benchmark catalog")
	benchFiles  = flag.Int("lake.bench.files", 100, "data files per table in the benchmark catalog")
	benchSync   = flag.Bool("lake.bench.sync", true, "RockLake fsyncs every commit in the benchmarks")
)

// benchCatalog fills a catalog of tables × files: a table row, four
// columns and a stats row per table; a data file row and two column
// statistics rows per file, all live since snapshot 1. It is loaded by
// binary COPY, on either server.
func benchCatalog(b *testing.B, c *wireClient, tables, files int) {
	run := func(sql string) {
		c.fe.Send(&pgproto3.Query{String: sql})
		msgs, err := c.until(b)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range msgs {
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				b.Fatalf("%s: %s", summary(sql), e.Message)
			}
		}
	}
	// copyIn sends the rows in binary COPY streams of at most 20,000 rows,
	// each in its own transaction, so that big catalogs load in bounded
	// memory.
	copyIn := func(sql string, types []Type, rows func(emit func(...any))) {
		const chunk = 20000
		var body []byte
		n := 0
		flush := func() {
			if n == 0 {
				return
			}
			body = append(body, 0xFF, 0xFF)
			run("BEGIN")
			msgs, err := c.copyInRun(b, sql, [][]byte{body}, "")
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range msgs {
				if e, ok := m.(*pgproto3.ErrorResponse); ok {
					b.Fatalf("%s: %s", sql, e.Message)
				}
			}
			run("COMMIT")
			body, n = nil, 0
		}
		rows(func(vals ...any) {
			if n == 0 {
				body = append(body[:0], binarySignature...)
				body = append(body, 0, 0, 0, 0, 0, 0, 0, 0)
			}
			body = binary.BigEndian.AppendUint16(body, uint16(len(vals)))
			for i, v := range vals {
				if v == nil {
					body = binary.BigEndian.AppendUint32(body, 0xFFFFFFFF)
					continue
				}
				val, err := parseText(types[i], fmt.Sprint(v))
				if err != nil {
					b.Fatal(err)
				}
				at := len(body)
				body = append(body, 0, 0, 0, 0)
				body = val.AppendBinary(body)
				binary.BigEndian.PutUint32(body[at:], uint32(len(body)-at-4))
			}
			if n++; n == chunk {
				flush()
			}
		})
		flush()
	}
	run(`INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 1, 1)`)
	i8, vc, bo, uu := TInt8, TVarchar, TBool, TUUID
	copyIn(`COPY "public"."ducklake_table" FROM STDIN (FORMAT BINARY)`, []Type{i8, uu, i8, i8, i8, vc, vc, bo}, func(emit func(...any)) {
		for t := 1; t <= tables; t++ {
			emit(t, fmt.Sprintf("01a230c2-0000-7000-8000-%012d", t), 1, nil, 0, fmt.Sprintf("t%d", t), fmt.Sprintf("t%d/", t), true)
		}
	})
	copyIn(`COPY "public"."ducklake_column" FROM STDIN (FORMAT BINARY)`, []Type{i8, i8, i8, i8, i8, vc, vc, vc, vc, bo, i8, vc, vc}, func(emit func(...any)) {
		for t := 1; t <= tables; t++ {
			for k := 1; k <= 4; k++ {
				emit(k, 1, nil, t, k, fmt.Sprintf("c%d", k), "int64", nil, "NULL", true, nil, "literal", "duckdb")
			}
		}
	})
	copyIn(`COPY "public"."ducklake_table_stats" FROM STDIN (FORMAT BINARY)`, []Type{i8, i8, i8, i8}, func(emit func(...any)) {
		for t := 1; t <= tables; t++ {
			emit(t, files*1000, files*1000, files*5000)
		}
	})
	copyIn(`COPY "public"."ducklake_data_file" FROM STDIN (FORMAT BINARY)`, []Type{i8, i8, i8, i8, i8, vc, bo, vc, i8, i8, i8, i8, i8, vc, i8, i8}, func(emit func(...any)) {
		for t := 1; t <= tables; t++ {
			for f := 0; f < files; f++ {
				id := (t-1)*files + f + 1
				emit(id, t, 1, nil, nil, fmt.Sprintf("ducklake-%d.parquet", id), true, "parquet", 1000, 5000, 400, f*1000, nil, nil, nil, nil)
			}
		}
	})
	copyIn(`COPY "public"."ducklake_file_column_stats" FROM STDIN (FORMAT BINARY)`, []Type{i8, i8, i8, i8, i8, i8, vc, vc, bo, vc}, func(emit func(...any)) {
		for t := 1; t <= tables; t++ {
			for f := 0; f < files; f++ {
				id := (t-1)*files + f + 1
				emit(id, t, 1, 2000, 1000, 0, "0", "999", nil, nil)
				emit(id, t, 2, 2000, 1000, 0, "a", "z", nil, nil)
			}
		}
	})
}

type benchServer struct {
	name string
	c    *wireClient
	// pgPid is the PostgreSQL backend serving c (0 for RockLake).
	pgPid int
}

func benchServers(b *testing.B) []benchServer {
	pgtest.Require(b)
	durability := storage.Sync
	if !*benchSync {
		durability = storage.Relaxed
	}
	srv, addr := serveLake(b, Config{Dir: b.TempDir(), Durability: durability})
	b.Cleanup(func() { srv.Close() })
	lc := dialWire(b, addr, "lake")
	b.Cleanup(lc.close)
	benchCatalog(b, lc, *benchTables, *benchFiles)

	dsn := pgtest.NewDatabase(b, "lakebench")
	host := strings.TrimPrefix(dsn, "postgres://postgres@")
	hostport, db, _ := strings.Cut(host, "/")
	db, _, _ = strings.Cut(db, "?")
	pc := dialWire(b, hostport, db)
	b.Cleanup(pc.close)
	stmts := append([]string{"BEGIN"}, CatalogDDL()...)
	stmts = append(stmts, InitialRows("./", time.Now(), "01a230c2-da2c-7c8e-8e62-4d0cd3f5b5a1")...)
	pc.fe.Send(&pgproto3.Query{String: strings.Join(append(stmts, "COMMIT"), ";")})
	if _, err := pc.until(b); err != nil {
		b.Fatal(err)
	}
	benchCatalog(b, pc, *benchTables, *benchFiles)
	rows, _ := simple(b, pc, "SELECT pg_backend_pid()")
	pid, err := strconv.Atoi(rows[0][0])
	if err != nil {
		b.Fatal(err)
	}
	return []benchServer{{name: "rocklake", c: lc}, {name: "postgres", c: pc, pgPid: pid}}
}

func mustQuery(b *testing.B, c *wireClient, sql string) {
	c.fe.Send(&pgproto3.Query{String: sql})
	msgs, err := c.until(b)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range msgs {
		if e, ok := m.(*pgproto3.ErrorResponse); ok {
			b.Fatalf("%s: %s %s", summary(sql), e.Code, e.Message)
		}
	}
}

// BenchmarkCommitBatch measures DuckLake commits: BEGIN, a commit batch
// adding one file to a table (snapshot, data file, column statistics,
// table statistics update, change record) and COMMIT, one after another.
func BenchmarkCommitBatch(b *testing.B) {
	for _, s := range benchServers(b) {
		// Snapshot and file ids go on across the runs b.Run makes.
		next := 2
		file := *benchTables**benchFiles + 1
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				table := 1 + i%*benchTables
				mustQuery(b, s.c, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ")
				mustQuery(b, s.c, fmt.Sprintf(`INSERT INTO "public".ducklake_snapshot VALUES (%d, NOW(), 1, 1, %d);`+
					`INSERT INTO "public".ducklake_data_file VALUES (%d, %d, %d, NULL, NULL, 'ducklake-%d.parquet', true, 'parquet', 10, 500, 300, 0, NULL, NULL, NULL, NULL);`+
					`INSERT INTO "public".ducklake_file_column_stats VALUES (%d, %d, 1, 40, 10, 0, '1', '9', NULL, NULL),(%d, %d, 2, 40, 10, 0, 'a', 'b', NULL, NULL);`+
					`UPDATE "public".ducklake_table_stats SET record_count=%d, file_size_bytes=%d, next_row_id=%d WHERE table_id=%d;`+
					`INSERT INTO "public".ducklake_snapshot_changes VALUES (%d, 'inserted_into_table:%d', NULL, NULL, NULL)`,
					next, file+1, file, table, next, file, file, table, file, table, i, i, i, table, next, table))
				mustQuery(b, s.c, "COMMIT")
				next++
				file++
			}
		})
	}
}

// BenchmarkSnapshotLoad measures what DuckDB reads when it loads the
// latest snapshot and then scans one table: the snapshot, the schemas,
// tables and columns, the table's statistics and its data files.
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, s := range benchServers(b) {
		b.Run(s.name, func(b *testing.B) {
			defer startCPU(b, s).report(b)
			for i := 0; i < b.N; i++ {
				table := 1 + i%*benchTables
				mustQuery(b, s.c, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ")
				for _, q := range []string{
					`COPY (SELECT "snapshot_id", "schema_version", "next_catalog_id", "next_file_id" FROM (SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "public".ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM "public".ducklake_snapshot )) AS __unnamed_subquery ) TO STDOUT (FORMAT "binary")`,
					`COPY (SELECT "begin_snapshot", "end_snapshot", "schema_id", "schema_uuid", "schema_name", "path", "path_is_relative" FROM "public"."ducklake_schema" WHERE "begin_snapshot" <= '1') TO STDOUT (FORMAT "binary")`,
					`COPY (SELECT "table_id", "begin_snapshot", "end_snapshot", "schema_id", "table_uuid", "table_name", "path", "path_is_relative" FROM "public"."ducklake_table" WHERE "begin_snapshot" <= '1') TO STDOUT (FORMAT "binary")`,
					`COPY (SELECT "table_id", "begin_snapshot", "end_snapshot", "column_id", "column_name", "column_type", "initial_default", "default_value", "nulls_allowed", "parent_column", "default_value_type", "column_order" FROM "public"."ducklake_column" ) TO STDOUT (FORMAT "binary")`,
					fmt.Sprintf(`COPY (SELECT "table_id", "record_count", "file_size_bytes", "next_row_id" FROM "public"."ducklake_table_stats" WHERE "table_id" = '%d') TO STDOUT (FORMAT "binary")`, table),
					fmt.Sprintf(`COPY (SELECT "data_file_id", "table_id", "begin_snapshot", "end_snapshot", "path", "path_is_relative", "file_size_bytes", "footer_size", "row_id_start", "partial_max", "mapping_id" FROM "public"."ducklake_data_file" WHERE "table_id" = '%d' AND "begin_snapshot" <= '1') TO STDOUT (FORMAT "binary")`, table),
				} {
					mustQuery(b, s.c, q)
				}
				mustQuery(b, s.c, "COMMIT")
			}
		})
	}
}

// procCPU is the process's user and system CPU time so far: RockLake's
// and the benchmark client's, not PostgreSQL's (another process).
func procCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU is the user and system CPU time of PostgreSQL backend pid
// so far (/proc/pid/stat, in clock ticks of 10 ms).
func backendCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name (which may hold spaces): state is
	// field 3, utime 14, stime 15.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// cpuMeter reports CPU per operation, which other load on the machine
// disturbs less than wall time: cpu-ms/op is this process's (RockLake
// and the benchmark client; against PostgreSQL, the client alone, which
// reads the same bytes), pg-cpu-ms/op the PostgreSQL backend's.
type cpuMeter struct {
	s          benchServer
	proc, back time.Duration
}

func startCPU(b *testing.B, s benchServer) *cpuMeter {
	m := &cpuMeter{s: s, proc: procCPU()}
	if s.pgPid != 0 {
		m.back = backendCPU(b, s.pgPid)
	}
	return m
}

func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(procCPU()-m.proc)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	if m.s.pgPid != 0 {
		b.ReportMetric(float64(backendCPU(b, m.s.pgPid)-m.back)/float64(time.Millisecond)/float64(b.N), "pg-cpu-ms/op")
	}
}

// BenchmarkFullScan measures a scan that no table_id filter narrows:
// every data file of the catalog (DuckDB's expiry and cleanup read
// ducklake_data_file so), by binary COPY; ns/row is per file row.
func BenchmarkFullScan(b *testing.B) {
	rows := *benchTables * *benchFiles
	for _, s := range benchServers(b) {
		b.Run(s.name, func(b *testing.B) {
			defer startCPU(b, s).report(b)
			for i := 0; i < b.N; i++ {
				mustQuery(b, s.c, `COPY (SELECT "data_file_id", "table_id", "begin_snapshot", "end_snapshot", "path", "path_is_relative", "record_count", "file_size_bytes", "footer_size", "row_id_start", "partition_id", "encryption_key", "mapping_id" FROM "public"."ducklake_data_file" WHERE "begin_snapshot" <= '1') TO STDOUT (FORMAT "binary")`)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
		})
	}
}
