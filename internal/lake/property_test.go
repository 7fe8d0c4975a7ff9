package lake

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

var (
	propSeed  = flag.Int64("lake.seed", 0, "seed of TestRandomCommits (0: from the clock)")
	propSteps = flag.Int("lake.steps", 150, "steps of TestRandomCommits")
)

// TestRandomCommits drives RockLake and PostgreSQL through the same
// random sequence of DuckLake-shaped commit batches (new snapshots,
// files added and ended, statistics inserted and updated through
// WITH ... VALUES, deletes by id and by ctid, commits, rollbacks and
// duplicate snapshots) and snapshot reads (binary COPY and text SELECT,
// also from a REPEATABLE READ transaction while the other session
// commits), and requires every answer to be the same, rows compared as
// multisets (no statement here has ORDER BY). A failure prints
// the seed; -lake.seed replays it.
func TestRandomCommits(t *testing.T) {
	seed := *propSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (go test -run TestRandomCommits -lake.seed=%d)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	r := newReplay(t, false)
	r.initCatalog("init", "A", "", true, renderOpts{})
	r.lake.conn(t, "B")
	r.pg.conn(t, "B")

	g := &lakeGen{rng: rng, snapshot: 0, nextFile: 1}
	for i := 0; i < *propSteps; i++ {
		conn := "A"
		if rng.Intn(2) == 0 {
			conn = "B"
		}
		var sql string
		switch n := rng.Intn(10); {
		case n < 5:
			sql = g.commitBatch()
		case n < 8:
			sql = g.read()
		default:
			// A reader's snapshot, then the other session commits, then the
			// reader reads again and ends.
			other := map[string]string{"A": "B", "B": "A"}[conn]
			r.step(t, i, conn, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;"+g.read())
			r.step(t, i, other, g.commitBatch())
			sql = g.read() + ";COMMIT"
		}
		r.step(t, i, conn, sql)
		if t.Failed() {
			t.Fatalf("stopped at step %d (seed %d)", i, seed)
		}
	}
}

// step runs sql on conn of both servers and compares; after an error in
// a transaction block it sends ROLLBACK, as DuckDB does.
func (r *replay) step(t *testing.T, i int, conn, sql string) {
	q := func(sql string) string {
		// Without ORDER BY the order of rows is not part of the answer:
		// PostgreSQL's heap reuses space of pruned versions, RockLake
		// returns tid order.
		return r.run(fmt.Sprintf("step %d on %s: %s", i, conn, summary(sql)), true, renderOpts{sortRows: true}, func(t testing.TB, s *side) ([]pgproto3.BackendMessage, error) {
			c := s.conn(t, conn)
			c.fe.Send(&pgproto3.Query{String: sql})
			return c.until(t)
		})
	}
	if out := q(sql); strings.HasSuffix(out, "ReadyForQuery E") {
		q("ROLLBACK")
	}
}

// lakeGen produces statements in the shapes DuckLake sends. Its model
// of the catalog only steers the choices (which ids exist); correctness
// is judged by comparing the two servers.
type lakeGen struct {
	rng      *rand.Rand
	snapshot int
	nextFile int
	files    []int // data files added so far
}

func (g *lakeGen) pick(n int) []int {
	var out []int
	for i := 0; i < n && len(g.files) > 0; i++ {
		out = append(out, g.files[g.rng.Intn(len(g.files))])
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// commitBatch is BEGIN, one commit batch and COMMIT (sometimes
// ROLLBACK, sometimes a snapshot id already taken: 23505).
func (g *lakeGen) commitBatch() string {
	rng := g.rng
	id := g.snapshot + 1
	dup := rng.Intn(8) == 0
	if dup {
		id = rng.Intn(g.snapshot + 1)
	}
	table := 1 + rng.Intn(3)
	var b []string
	b = append(b, fmt.Sprintf(`INSERT INTO "public".ducklake_snapshot VALUES (%d, NOW(), %d, %d, %d)`, id, rng.Intn(3), rng.Intn(5), g.nextFile))
	var rows, stats []string
	added := 1 + rng.Intn(3)
	for k := 0; k < added; k++ {
		f := g.nextFile + k
		rows = append(rows, fmt.Sprintf(`(%d, %d, %d, NULL, NULL, 'ducklake-%d.parquet', true, 'parquet', %d, %d, %d, %d, NULL, NULL, NULL, NULL)`,
			f, table, id, f, rng.Intn(100), 300+rng.Intn(1000), 200, rng.Intn(1000)))
		stats = append(stats, fmt.Sprintf(`(%d, %d, 1, %d, %d, 0, '%d', '%d', NULL, NULL)`, f, table, 20+rng.Intn(10), rng.Intn(50), rng.Intn(10), 10+rng.Intn(90)))
	}
	b = append(b, `INSERT INTO "public".ducklake_data_file VALUES `+strings.Join(rows, ","))
	b = append(b, `INSERT INTO "public".ducklake_file_column_stats VALUES `+strings.Join(stats, ","))
	if ended := g.pick(rng.Intn(3)); len(ended) > 0 {
		b = append(b, fmt.Sprintf(`UPDATE "public".ducklake_data_file SET end_snapshot = %d WHERE end_snapshot IS NULL AND data_file_id IN (%s)`, id, joinInts(ended)))
	}
	if gone := g.pick(rng.Intn(2)); len(gone) > 0 {
		b = append(b, fmt.Sprintf(`DELETE FROM "public".ducklake_file_column_stats WHERE data_file_id IN (%s)`, joinInts(gone)))
	}
	switch rng.Intn(3) {
	case 0:
		b = append(b, fmt.Sprintf(`INSERT INTO "public".ducklake_table_stats VALUES (%d, %d, %d, %d)`, table, rng.Intn(100), rng.Intn(100), rng.Intn(5000)))
	case 1:
		b = append(b, fmt.Sprintf(`UPDATE "public".ducklake_table_stats SET record_count=%d, file_size_bytes=%d, next_row_id=%d WHERE table_id=%d`,
			rng.Intn(100), rng.Intn(5000), rng.Intn(100), table))
	case 2:
		b = append(b, fmt.Sprintf("WITH new_values(tid, cid, new_contains_null, new_contains_nan, new_min, new_max, new_extra_stats) AS (\nVALUES (%d, 1, %v, NULL, '%d', '%d', NULL),(%d, 2, false, NULL, 'a', 'z', NULL)\n)\nUPDATE \"public\".ducklake_table_column_stats\nSET contains_null=CAST(new_contains_null AS BOOLEAN), contains_nan=CAST(new_contains_nan AS BOOLEAN), min_value=new_min, max_value=new_max, extra_stats=new_extra_stats\nFROM new_values\nWHERE table_id=tid AND column_id=cid",
			table, rng.Intn(2) == 0, rng.Intn(10), 10+rng.Intn(90), table))
		b = append(b, fmt.Sprintf(`INSERT INTO "public".ducklake_table_column_stats VALUES (%d, %d, false, NULL, '0', '9', NULL)`, table, 1+rng.Intn(2)))
	}
	b = append(b, fmt.Sprintf(`INSERT INTO "public".ducklake_snapshot_changes VALUES (%d, 'inserted_into_table:%d', NULL, NULL, NULL)`, id, table))
	end := "COMMIT"
	if rng.Intn(6) == 0 {
		end = "ROLLBACK"
	}
	if !dup && end == "COMMIT" {
		g.snapshot = id
		for k := 0; k < added; k++ {
			g.files = append(g.files, g.nextFile+k)
		}
		g.nextFile += added
	}
	// The batch is one Query, as DuckDB sends it; BEGIN and COMMIT are
	// separate Queries in DuckDB, here joined for brevity, which keeps
	// their meaning (an error aborts the block and COMMIT rolls back).
	return "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;" + strings.Join(b, ";") + ";" + end
}

// read is one of DuckLake's snapshot reads.
func (g *lakeGen) read() string {
	rng := g.rng
	at := rng.Intn(g.snapshot + 2)
	table := 1 + rng.Intn(3)
	switch rng.Intn(6) {
	case 0:
		return fmt.Sprintf(`COPY (SELECT "data_file_id", "table_id", "begin_snapshot", "end_snapshot", "path", "path_is_relative", "file_size_bytes", "footer_size", "row_id_start", "partial_max", "mapping_id" FROM "public"."ducklake_data_file" WHERE "table_id" = '%d' AND "begin_snapshot" <= '%d') TO STDOUT (FORMAT "binary")`, table, at)
	case 1:
		return `COPY (SELECT "snapshot_id", "schema_version", "next_catalog_id", "next_file_id" FROM (SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "public".ducklake_snapshot WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM "public".ducklake_snapshot )) AS __unnamed_subquery ) TO STDOUT (FORMAT "binary")`
	case 2:
		return fmt.Sprintf(`COPY (SELECT "data_file_id", "value_count", "max_value", "min_value" FROM (SELECT data_file_id, value_count, max_value, min_value FROM "public".ducklake_file_column_stats WHERE column_id = 1 AND table_id = %d) AS __unnamed_subquery ) TO STDOUT (FORMAT "binary")`, table)
	case 3:
		return fmt.Sprintf(`SELECT "table_id", "column_id", "contains_null", "contains_nan", "min_value", "max_value", "extra_stats" FROM "public"."ducklake_table_column_stats" WHERE "table_id" = '%d'`, table)
	case 4:
		return `COPY (SELECT "table_id", "record_count", "file_size_bytes", "next_row_id" FROM "public"."ducklake_table_stats" ) TO STDOUT (FORMAT "binary")`
	}
	return `SELECT "snapshot_id", "changes_made", "author", "commit_message", "commit_extra_info" FROM "public"."ducklake_snapshot_changes"`
}
