//go:build cgo

package parquettest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/lake"
	"github.com/rockstream/rockstream/internal/storage"
)

// The lake's one table, main.t(a BIGINT, b VARCHAR, c DOUBLE), with its
// DuckLake ids: table 1, columns 1..3.
const (
	tableID = 1
	colA    = 1
	colB    = 2
	colC    = 3
)

// row is one row of t; b is nil for NULL.
type row struct {
	a int64
	b *string
	c float64
}

// fileRows are the rows DuckDB writes into file k: n rows, a = 1000k+i,
// b NULL every seventh row, c = i/4.
func fileRows(k, n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{a: int64(1000*k + i), c: float64(i) / 4}
		if i%7 != 3 {
			s := fmt.Sprintf("v%05d", i)
			out[i].b = &s
		}
	}
	return out
}

// fileSQL is the DuckDB statement writing fileRows(k, n) to path.
func fileSQL(k, n int, path string) string {
	return fmt.Sprintf(`COPY (SELECT (%d + i)::BIGINT AS a,
		CASE WHEN i %% 7 = 3 THEN NULL ELSE 'v' || lpad(i::VARCHAR, 5, '0') END AS b,
		i::DOUBLE / 4 AS c
		FROM range(%d) r(i) ORDER BY i) TO '%s' (FORMAT parquet)`, 1000*k, n, path)
}

// columnStats are one column's statistics in one file, as DuckLake
// keeps them in ducklake_file_column_stats.
type columnStats struct {
	size, values, nulls int64
	min, max            string
}

// dataFile is one registered file, as ducklake_data_file describes it.
type dataFile struct {
	id, recordCount, size, footer, rowIDStart int64
	begin                                     int64
	end                                       *int64
	path                                      string
	relative                                  bool
}

// TestParquetFiles writes Parquet files with DuckDB, registers them in
// RockLake with DuckLake's commit batches, loads the snapshot back over
// the wire as DuckLake does and reads the files it lists with DuckDB's
// read_parquet: the rows are the ones written, and every statistic the
// catalog holds agrees with the files.
func TestParquetFiles(t *testing.T) {
	began := time.Now()
	dataPath := filepath.Join(t.TempDir(), "lakedata") + "/"
	srv, err := lake.Open(lake.Config{Dir: t.TempDir(), DataPath: dataPath, Durability: storage.Relaxed,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, "postgres://duckdb@"+ln.Addr().String()+"/lake?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	c := &catalog{t: t, ctx: ctx, conn: conn}

	// Snapshot 1 creates main.t, as DuckLake's CREATE TABLE commits it.
	snap := c.latestSnapshot()
	if snap.id != 0 || snap.nextCatalogID != 1 || snap.nextFileID != 0 {
		t.Fatalf("bootstrapped lake: latest snapshot %+v, want 0 with next catalog id 1, next file id 0", snap)
	}
	c.commit(fmt.Sprintf(`BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;`+
		`INSERT INTO "public".ducklake_snapshot VALUES (1, NOW(), 1, 4, 0);`+
		`INSERT INTO "public".ducklake_table VALUES (%d, '01a230c3-71ee-7887-86d6-256711eb38ee', 1, NULL, 0, 't', 't/', true);`+
		`INSERT INTO "public".ducklake_column VALUES (%d, 1, NULL, %d, 1, 'a', 'int64', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),`+
		`(%d, 1, NULL, %d, 2, 'b', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),`+
		`(%d, 1, NULL, %d, 3, 'c', 'float64', NULL, 'NULL', true, NULL, 'literal', 'duckdb');`+
		`INSERT INTO "public".ducklake_schema_versions VALUES (1,1,1);`+
		`INSERT INTO "public".ducklake_snapshot_changes VALUES (1, 'created_table:"main"."t"', NULL, NULL, NULL);COMMIT`,
		tableID, colA, tableID, colB, tableID, colC, tableID))

	// Snapshots 2..4 insert one Parquet file each, written by DuckDB.
	tableDir := filepath.Join(dataPath, "main", "t")
	if err := os.MkdirAll(tableDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sizes := []int{250, 1, 3000}
	var want []row
	var records, bytesTotal int64
	tableMin, tableMax := map[int]string{}, map[int]string{}
	tableNulls := map[int]bool{}
	for k, n := range sizes {
		snap := c.latestSnapshot()
		fileID, next := snap.nextFileID, snap.id+1
		name := fmt.Sprintf("ducklake-01a230c3-72ef-7693-a041-%012d.parquet", k)
		path := filepath.Join(tableDir, name)
		if _, err := duck.ExecContext(ctx, fileSQL(k, n, path)); err != nil {
			t.Fatalf("DuckDB writing %s: %v", name, err)
		}
		want = append(want, fileRows(k, n)...)
		size, footer := fileSizes(t, path)
		stats := parquetStats(t, duck, path)
		rowIDStart := records
		records += int64(n)
		bytesTotal += size
		var batch strings.Builder
		fmt.Fprintf(&batch, `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;INSERT INTO "public".ducklake_snapshot VALUES (%d, NOW(), 1, 4, %d);`, next, fileID+1)
		colValues := func() string {
			var vs []string
			for col := colA; col <= colC; col++ {
				s := stats[col]
				if k == 0 || less(col, s.min, tableMin[col]) {
					tableMin[col] = s.min
				}
				if k == 0 || less(col, tableMax[col], s.max) {
					tableMax[col] = s.max
				}
				tableNulls[col] = tableNulls[col] || s.nulls > 0
				vs = append(vs, fmt.Sprintf("(%d, %d, %v, NULL, %s, %s, NULL)", tableID, col, tableNulls[col], quote(tableMin[col]), quote(tableMax[col])))
			}
			return strings.Join(vs, ",")
		}
		if k == 0 {
			fmt.Fprintf(&batch, `INSERT INTO "public".ducklake_table_stats VALUES (%d, %d, %d, %d);`, tableID, records, records, bytesTotal)
			fmt.Fprintf(&batch, `INSERT INTO "public".ducklake_table_column_stats VALUES %s;`, colValues())
		} else {
			fmt.Fprintf(&batch, `UPDATE "public".ducklake_table_stats SET record_count=%d, file_size_bytes=%d, next_row_id=%d WHERE table_id=%d;`, records, bytesTotal, records, tableID)
			fmt.Fprintf(&batch, "\nWITH new_values(tid, cid, new_contains_null, new_contains_nan, new_min, new_max, new_extra_stats) AS (\nVALUES %s\n)\n"+
				"UPDATE \"public\".ducklake_table_column_stats\nSET contains_null=CAST(new_contains_null AS BOOLEAN), contains_nan=CAST(new_contains_nan AS BOOLEAN), min_value=new_min, max_value=new_max, extra_stats=new_extra_stats\n"+
				"FROM new_values\nWHERE table_id=tid AND column_id=cid;\n", colValues())
		}
		fmt.Fprintf(&batch, `INSERT INTO "public".ducklake_data_file VALUES (%d, %d, %d, NULL, NULL, %s, true, 'parquet', %d, %d, %d, %d, NULL, NULL, NULL, NULL);`,
			fileID, tableID, next, quote(name), n, size, footer, rowIDStart)
		var cs []string
		for col := colA; col <= colC; col++ {
			s := stats[col]
			cs = append(cs, fmt.Sprintf("(%d, %d, %d, %d, %d, %d, %s, %s, NULL, NULL)", fileID, tableID, col, s.size, s.values, s.nulls, quote(s.min), quote(s.max)))
		}
		fmt.Fprintf(&batch, `INSERT INTO "public".ducklake_file_column_stats VALUES %s;`, strings.Join(cs, ","))
		fmt.Fprintf(&batch, `INSERT INTO "public".ducklake_snapshot_changes VALUES (%d, 'inserted_into_table:%d', NULL, NULL, NULL);COMMIT`, next, tableID)
		c.commit(batch.String())
	}
	latest := c.latestSnapshot()
	if latest.id != 4 || latest.nextFileID != 3 {
		t.Fatalf("latest snapshot %+v, want 4 with next file id 3", latest)
	}

	// The snapshot load: the data path, the schema's and table's paths,
	// the table's files and their statistics, as DuckLake reads them.
	files := c.checkLoad(t, duck, latest.id, dataPath, want, records, bytesTotal, tableMin, tableMax)
	if len(files) != len(sizes) {
		t.Fatalf("snapshot %d lists %d files, want %d", latest.id, len(files), len(sizes))
	}

	// Snapshot 5 ends file 0 (as a compaction or a whole-file delete
	// does); snapshot 5 no longer lists it, snapshot 4 still does.
	c.commit(`BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;INSERT INTO "public".ducklake_snapshot VALUES (5, NOW(), 1, 4, 3);` +
		`UPDATE "public".ducklake_data_file SET end_snapshot = 5 WHERE end_snapshot IS NULL AND data_file_id IN (0);` +
		`INSERT INTO "public".ducklake_snapshot_changes VALUES (5, 'deleted_from_table:1', NULL, NULL, NULL);COMMIT`)
	if got := c.files(5); len(got) != 2 || got[0].id != 1 || got[1].id != 2 {
		t.Errorf("snapshot 5 lists files %+v, want 1 and 2", got)
	}
	if got := c.files(4); len(got) != 3 || got[0].end == nil || *got[0].end != 5 {
		t.Errorf("snapshot 4 lists files %+v, want 0 (ended at 5), 1 and 2", got)
	}
	var left []string
	for _, f := range c.files(5) {
		left = append(left, quote(resolve(dataPath, f)))
	}
	var n int64
	if err := duck.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) FROM read_parquet([%s])", strings.Join(left, ", "))).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != int64(sizes[1]+sizes[2]) {
		t.Errorf("the files of snapshot 5 hold %d rows, want %d", n, sizes[1]+sizes[2])
	}
	t.Logf("DuckDB %s; test ran in %v", duckVersion(t, duck), time.Since(began).Round(time.Millisecond))
}

// checkLoad loads snapshot snap of table t and checks it against the
// files and the rows written.
func (c *catalog) checkLoad(t *testing.T, duck *sql.DB, snap int64, dataPath string, want []row, records, bytesTotal int64, tableMin, tableMax map[int]string) []dataFile {
	if got := c.metadata("data_path"); got != dataPath {
		t.Errorf("ducklake_metadata data_path %q, want %q", got, dataPath)
	}
	files := c.files(snap)
	var paths []string
	for _, f := range files {
		p := resolve(dataPath, f)
		paths = append(paths, quote(p))
		size, footer := fileSizes(t, p)
		if f.size != size || f.footer != footer {
			t.Errorf("file %d: catalog size %d, footer %d; the file has %d, %d", f.id, f.size, f.footer, size, footer)
		}
		var n int64
		var minA, maxA int64
		var minB, maxB string
		var minC, maxC float64
		var nullB int64
		q := fmt.Sprintf(`SELECT count(*), min(a), max(a), min(b), max(b), count(*) - count(b), min(c), max(c) FROM read_parquet('%s')`, p)
		if err := duck.QueryRowContext(c.ctx, q).Scan(&n, &minA, &maxA, &minB, &maxB, &nullB, &minC, &maxC); err != nil {
			t.Fatalf("DuckDB reading %s: %v", p, err)
		}
		if n != f.recordCount {
			t.Errorf("file %d: record_count %d, the file has %d rows", f.id, f.recordCount, n)
		}
		stats := c.fileStats(f.id)
		for col, ps := range parquetStats(t, duck, p) {
			if stats[col].size != ps.size {
				t.Errorf("file %d column %d: column_size_bytes %d, the file's column chunks take %d", f.id, col, stats[col].size, ps.size)
			}
		}
		check := func(col int, nulls int64, lo, hi string) {
			s := stats[col]
			if s.values != n || s.nulls != nulls || s.min != lo || s.max != hi || s.size <= 0 {
				t.Errorf("file %d column %d: catalog stats %+v; the file has %d values, %d nulls, min %s, max %s", f.id, col, s, n, nulls, lo, hi)
			}
		}
		check(colA, 0, strconv.FormatInt(minA, 10), strconv.FormatInt(maxA, 10))
		check(colB, nullB, minB, maxB)
		if s := stats[colC]; s.values != n || s.nulls != 0 || parseFloat(t, s.min) != minC || parseFloat(t, s.max) != maxC {
			t.Errorf("file %d column c: catalog stats %+v; the file has min %v, max %v", f.id, s, minC, maxC)
		}
	}
	// Every row, read through the catalog's file list.
	rs, err := duck.QueryContext(c.ctx, fmt.Sprintf("SELECT a, b, c FROM read_parquet([%s]) ORDER BY a", strings.Join(paths, ", ")))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var got []row
	for rs.Next() {
		var r row
		var b sql.NullString
		if err := rs.Scan(&r.a, &b, &r.c); err != nil {
			t.Fatal(err)
		}
		if b.Valid {
			r.b = &b.String
		}
		got = append(got, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(want, func(i, j int) bool { return want[i].a < want[j].a })
	if len(got) != len(want) {
		t.Fatalf("read %d rows through the catalog, wrote %d", len(got), len(want))
	}
	for i := range got {
		if got[i].a != want[i].a || got[i].c != want[i].c || (got[i].b == nil) != (want[i].b == nil) || (got[i].b != nil && *got[i].b != *want[i].b) {
			t.Fatalf("row %d: read %v, wrote %v", i, fmtRow(got[i]), fmtRow(want[i]))
		}
	}
	// The table's statistics sum and bound the files'.
	rec, size := c.tableStats()
	if rec != records || size != bytesTotal {
		t.Errorf("ducklake_table_stats: %d records, %d bytes; the files hold %d, %d", rec, size, records, bytesTotal)
	}
	for col, mm := range c.tableColumnStats() {
		if mm[0] != tableMin[col] || mm[1] != tableMax[col] {
			t.Errorf("ducklake_table_column_stats column %d: [%s, %s], want [%s, %s]", col, mm[0], mm[1], tableMin[col], tableMax[col])
		}
	}
	return files
}

func fmtRow(r row) string {
	b := "NULL"
	if r.b != nil {
		b = *r.b
	}
	return fmt.Sprintf("(%d, %s, %v)", r.a, b, r.c)
}

// resolve is DuckLake's path of a file: relative paths hang under the
// data path, the schema's path (main/) and the table's (t/).
func resolve(dataPath string, f dataFile) string {
	if !f.relative {
		return f.path
	}
	return dataPath + "main/" + "t/" + f.path
}

// fileSizes returns a Parquet file's size and its footer's (the
// metadata length stored before the closing magic), checking the magic.
func fileSizes(t *testing.T, path string) (size, footer int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Fatalf("%s is not a Parquet file", path)
	}
	return int64(len(b)), int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
}

// parquetStats reads a file's column statistics from its Parquet
// metadata, as DuckLake's writer records them: compressed size, value
// and null counts, min and max over the row groups.
func parquetStats(t *testing.T, duck *sql.DB, path string) map[int]columnStats {
	rs, err := duck.Query(`SELECT path_in_schema, total_compressed_size, num_values, stats_null_count, stats_min_value, stats_max_value
		FROM parquet_metadata(?) ORDER BY row_group_id`, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[int]columnStats{}
	cols := map[string]int{"a": colA, "b": colB, "c": colC}
	for rs.Next() {
		var name, lo, hi string
		var size, values, nulls int64
		if err := rs.Scan(&name, &size, &values, &nulls, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		col := cols[name]
		s, seen := out[col]
		s.size += size
		s.values += values
		s.nulls += nulls
		if !seen || less(col, lo, s.min) {
			s.min = lo
		}
		if !seen || less(col, s.max, hi) {
			s.max = hi
		}
		out[col] = s
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%s: statistics for %d columns, want 3", path, len(out))
	}
	return out
}

// less compares two statistics strings of a column by its type.
func less(col int, x, y string) bool {
	switch col {
	case colA:
		a, _ := strconv.ParseInt(x, 10, 64)
		b, _ := strconv.ParseInt(y, 10, 64)
		return a < b
	case colC:
		a, _ := strconv.ParseFloat(x, 64)
		b, _ := strconv.ParseFloat(y, 64)
		return a < b
	}
	return x < y
}

func parseFloat(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("statistic %q is not a number", s)
	}
	return f
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func duckVersion(t *testing.T, duck *sql.DB) string {
	var v string
	if err := duck.QueryRow("SELECT version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// catalog is the DuckLake side of the conversation with RockLake.
type catalog struct {
	t    *testing.T
	ctx  context.Context
	conn *pgconn.PgConn
}

// commit sends one commit batch (one Query, as DuckLake does) and fails
// on any error.
func (c *catalog) commit(batch string) {
	c.t.Helper()
	if _, err := c.conn.Exec(c.ctx, batch).ReadAll(); err != nil {
		c.t.Fatalf("commit batch: %v\n%s", err, batch)
	}
}

type snapshot struct{ id, schemaVersion, nextCatalogID, nextFileID int64 }

// latestSnapshot runs DuckLake's postgres_query for the latest snapshot:
// Parse and Describe, then the binary COPY over the subquery.
func (c *catalog) latestSnapshot() snapshot {
	c.t.Helper()
	q := `SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "public".ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM "public".ducklake_snapshot )`
	sd, err := c.conn.Prepare(c.ctx, "", q, nil)
	if err != nil {
		c.t.Fatalf("Parse/Describe: %v", err)
	}
	if len(sd.Fields) != 4 || sd.Fields[0].DataTypeOID != 20 {
		c.t.Fatalf("Describe of the snapshot query: %+v", sd.Fields)
	}
	rows := c.copyOut(`COPY (SELECT "snapshot_id", "schema_version", "next_catalog_id", "next_file_id" FROM (`+q+`) AS __unnamed_subquery ) TO STDOUT (FORMAT "binary")`, 4)
	if len(rows) != 1 {
		c.t.Fatalf("latest snapshot: %d rows", len(rows))
	}
	r := rows[0]
	return snapshot{i8(c.t, r[0]), i8(c.t, r[1]), i8(c.t, r[2]), i8(c.t, r[3])}
}

// files is DuckLake's load of a table's data files at a snapshot: the
// scan of ducklake_data_file by table_id and begin_snapshot, the end
// snapshot applied by the reader.
func (c *catalog) files(snap int64) []dataFile {
	c.t.Helper()
	rows := c.copyOut(fmt.Sprintf(`COPY (SELECT "data_file_id", "table_id", "begin_snapshot", "end_snapshot", "record_count", "path", "path_is_relative", "file_size_bytes", "footer_size", "row_id_start", "mapping_id" FROM "public"."ducklake_data_file" WHERE "table_id" = '%d' AND "begin_snapshot" <= '%d') TO STDOUT (FORMAT "binary")`, tableID, snap), 11)
	var out []dataFile
	for _, r := range rows {
		f := dataFile{id: i8(c.t, r[0]), begin: i8(c.t, r[2]), recordCount: i8(c.t, r[4]), path: string(r[5]),
			relative: len(r[6]) == 1 && r[6][0] == 1, size: i8(c.t, r[7]), footer: i8(c.t, r[8]), rowIDStart: i8(c.t, r[9])}
		if r[3] != nil {
			e := i8(c.t, r[3])
			f.end = &e
		}
		if f.end == nil || *f.end > snap {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (c *catalog) fileStats(fileID int64) map[int]columnStats {
	c.t.Helper()
	out := map[int]columnStats{}
	for col := colA; col <= colC; col++ {
		// DuckLake's per-column statistics query (postgres_query).
		rows := c.copyOut(fmt.Sprintf(`COPY (SELECT "data_file_id", "value_count", "max_value", "min_value" FROM (SELECT data_file_id, value_count, max_value, min_value FROM "public".ducklake_file_column_stats WHERE column_id = %d AND table_id = %d) AS __unnamed_subquery ) TO STDOUT (FORMAT "binary")`, col, tableID), 4)
		for _, r := range rows {
			if i8(c.t, r[0]) == fileID {
				out[col] = columnStats{values: i8(c.t, r[1]), max: string(r[2]), min: string(r[3])}
			}
		}
	}
	rows := c.copyOut(fmt.Sprintf(`COPY (SELECT "column_id", "null_count", "column_size_bytes" FROM "public"."ducklake_file_column_stats" WHERE "data_file_id" = '%d') TO STDOUT (FORMAT "binary")`, fileID), 3)
	for _, r := range rows {
		col := int(i8(c.t, r[0]))
		s := out[col]
		s.nulls, s.size = i8(c.t, r[1]), i8(c.t, r[2])
		out[col] = s
	}
	return out
}

func (c *catalog) tableStats() (records, size int64) {
	rows := c.copyOut(fmt.Sprintf(`COPY (SELECT "table_id", "record_count", "file_size_bytes", "next_row_id" FROM "public"."ducklake_table_stats" WHERE "table_id" = '%d') TO STDOUT (FORMAT "binary")`, tableID), 4)
	if len(rows) != 1 {
		c.t.Fatalf("ducklake_table_stats: %d rows for table %d", len(rows), tableID)
	}
	return i8(c.t, rows[0][1]), i8(c.t, rows[0][2])
}

func (c *catalog) tableColumnStats() map[int][2]string {
	rows := c.copyOut(fmt.Sprintf(`COPY (SELECT "table_id", "column_id", "contains_null", "contains_nan", "min_value", "max_value", "extra_stats" FROM "public"."ducklake_table_column_stats" WHERE "table_id" = '%d') TO STDOUT (FORMAT "binary")`, tableID), 7)
	out := map[int][2]string{}
	for _, r := range rows {
		out[int(i8(c.t, r[1]))] = [2]string{string(r[4]), string(r[5])}
	}
	if len(out) != 3 {
		c.t.Fatalf("ducklake_table_column_stats: %d columns", len(out))
	}
	return out
}

func (c *catalog) metadata(key string) string {
	rows := c.copyOut(`COPY (SELECT "key", "value", "scope", "scope_id" FROM "public"."ducklake_metadata" ) TO STDOUT (FORMAT "binary")`, 4)
	for _, r := range rows {
		if string(r[0]) == key {
			return string(r[1])
		}
	}
	return ""
}

// copyOut runs a binary COPY TO STDOUT and splits the stream into rows
// of ncols fields (nil for NULL).
func (c *catalog) copyOut(sql string, ncols int) [][][]byte {
	c.t.Helper()
	var buf bytes.Buffer
	if _, err := c.conn.CopyTo(c.ctx, &buf, sql); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	b := buf.Bytes()
	const sig = "PGCOPY\n\xff\r\n\x00"
	if len(b) < len(sig)+8 || string(b[:len(sig)]) != sig {
		c.t.Fatalf("%s: not a binary COPY stream", sql)
	}
	b = b[len(sig)+8+int(binary.BigEndian.Uint32(b[len(sig)+4:])):]
	var rows [][][]byte
	for {
		if len(b) < 2 {
			c.t.Fatalf("%s: truncated stream", sql)
		}
		n := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if n == -1 {
			return rows
		}
		if int(n) != ncols {
			c.t.Fatalf("%s: a tuple of %d fields, want %d", sql, n, ncols)
		}
		r := make([][]byte, n)
		for i := range r {
			l := int32(binary.BigEndian.Uint32(b))
			b = b[4:]
			if l >= 0 {
				r[i], b = b[:l], b[l:]
			}
		}
		rows = append(rows, r)
	}
}

// i8 decodes a binary int8 field.
func i8(t *testing.T, b []byte) int64 {
	if len(b) != 8 {
		t.Fatalf("int8 field of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b))
}
