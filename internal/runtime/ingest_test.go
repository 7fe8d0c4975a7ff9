package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

func init() {
	spec.Register(spec.Kind{Name: "testkind", Source: true, Sink: true, Secrets: []string{"pw"},
		Validate: func(s *spec.Spec) error {
			if v, _ := s.Option("bad"); v != "" {
				return errors.New("bad option; pw is " + s.OptionDefault("pw", ""))
			}
			return nil
		}})
}

func textRow(vals ...string) zset.Row {
	r := make(zset.Row, len(vals))
	for i, v := range vals {
		if v == "NULL" {
			r[i] = types.Null
		} else {
			r[i] = types.MakeText(v)
		}
	}
	return r
}

func queryText(t *testing.T, s *Session, q string) string {
	t.Helper()
	r := mustExec(t, s, q)
	var lines []string
	for _, row := range r.Rows {
		var f []string
		for i, v := range row {
			if v.IsNull() {
				f = append(f, "NULL")
			} else {
				f = append(f, types.Format(v, r.Columns[i].Type))
			}
		}
		lines = append(lines, strings.Join(f, ","))
	}
	return strings.Join(lines, "\n")
}

// TestIngest applies batches of every kind of change, with the progress,
// and checks the table, a view over it and the progress.
func TestIngest(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE kv (k int PRIMARY KEY, v text NOT NULL)")
	mustExec(t, s, "CREATE TABLE bag (a int, b text)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c, sum(k) AS s FROM kv")
	ctx := context.Background()
	_, err := eng.Ingest(ctx, &Ingest{Source: "src", Progress: []byte("p1"), Changes: []RowChange{
		{Table: "kv", Op: Insert, Row: textRow("1", "a")},
		{Table: "kv", Op: Upsert, Row: textRow("2", "b")},
		{Table: "kv", Op: Upsert, Row: textRow("1", "a2")},
		{Table: "bag", Op: Insert, Row: textRow("7", "x")},
		{Table: "bag", Op: Insert, Row: textRow("7", "x")},
		{Table: "bag", Op: Delete, Row: textRow("7", "x")},
		{Table: "bag", Op: Delete, Row: textRow("8", "absent")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, s, "SELECT * FROM kv ORDER BY k"); got != "1,a2\n2,b" {
		t.Fatalf("kv = %q", got)
	}
	if got := queryText(t, s, "SELECT * FROM bag"); got != "7,x" {
		t.Fatalf("bag = %q", got)
	}
	if got := queryText(t, s, "SELECT * FROM n"); got != "2,3" {
		t.Fatalf("n = %q", got)
	}
	if p, _ := eng.SourceProgress("src"); string(p) != "p1" {
		t.Fatalf("progress = %q", p)
	}

	// A violation without an error table fails the batch, progress
	// included.
	_, err = eng.Ingest(ctx, &Ingest{Source: "src", Progress: []byte("p2"), Changes: []RowChange{
		{Table: "kv", Op: DeleteKey, Row: textRow("2", "NULL")},
		{Table: "kv", Op: Insert, Row: textRow("1", "dup")},
	}})
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.UniqueViolation {
		t.Fatalf("err = %v, want a unique violation", err)
	}
	if p, _ := eng.SourceProgress("src"); string(p) != "p1" {
		t.Fatalf("progress after a failed batch = %q", p)
	}

	// With an error table the bad changes are reported there and the
	// rest applies.
	mustExec(t, s, "CREATE TABLE errs "+ErrorTableColumns)
	res, err := eng.Ingest(ctx, &Ingest{Source: "src", Progress: []byte("p3"), ErrorTable: "errs",
		Errors: []IngestError{{Origin: Origin{Partition: 0, Offset: 4, Raw: []byte("{oops")}, Err: "malformed"}},
		Changes: []RowChange{
			{Table: "kv", Op: DeleteKey, Row: textRow("2", "NULL")},
			{Table: "kv", Op: Insert, Row: textRow("3", "NULL"), Origin: Origin{Partition: 1, Offset: 9, Raw: []byte("r9")}},
			{Table: "kv", Op: Insert, Row: textRow("x", "v"), Origin: Origin{Offset: -1, Position: "0/16", Raw: []byte("rx")}},
		}})
	if err != nil || res.Applied != 1 || len(res.Rejected) != 2 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if got := queryText(t, s, "SELECT * FROM kv ORDER BY k"); got != "1,a2" {
		t.Fatalf("kv = %q", got)
	}
	want := `src,NULL,NULL,0/16,rx,column "k": invalid input syntax for type integer: "x"
src,0,4,NULL,{oops,malformed
src,1,9,NULL,r9,null value in column "v" of relation "kv" violates not-null constraint`
	if got := queryText(t, s, `SELECT * FROM errs ORDER BY error`); got != want {
		t.Fatalf("errs =\n%s\nwant\n%s", got, want)
	}
	if err := eng.VerifyViews(); err != nil {
		t.Fatal(err)
	}
}

// TestConnectorCatalog creates, pauses, lists and drops connectors and
// checks that their definitions survive a restart and that secrets are
// never shown.
func TestConnectorCatalog(t *testing.T) {
	store := NewMemoryStore()
	eng, err := Open(store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE t (a int)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS c FROM t")
	mustExec(t, s, "CREATE SOURCE src FROM testkind (host = 'h', pw = 'hunter2', error_table = 'src_errors') INTO t")
	mustExec(t, s, "CREATE SINK out FROM v INTO testkind (pw = 'hunter2')")
	mustExec(t, s, "ALTER SOURCE src PAUSE")
	_, err = s.Exec(context.Background(), "CREATE SOURCE bad FROM testkind (bad = 'yes', pw = 'hunter2') INTO t", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v, want a redacted error", err)
	}
	for _, q := range []string{"CREATE SOURCE s2 FROM nosuch () INTO t", "CREATE SINK k2 FROM t INTO testkind ()",
		"CREATE SOURCE s3 FROM testkind () INTO v", "DROP TABLE t CASCADE", "DROP SINK src", "CREATE SOURCE src FROM testkind () INTO t"} {
		if _, err := s.Exec(context.Background(), q, nil); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
	check := func(eng *Engine) {
		s := eng.NewSession()
		got := queryText(t, s, "SELECT name, connector, target, state, options FROM rockstream_catalog.sources")
		want := "src,testkind,t,paused,host = 'h', pw = '********', error_table = 'src_errors'"
		if got != want {
			t.Errorf("sources = %q, want %q", got, want)
		}
		if got := queryText(t, s, "SHOW SINKS"); !strings.HasPrefix(got, "out,testkind,v,stopped") || strings.Contains(got, "hunter2") {
			t.Errorf("sinks = %q", got)
		}
		mustExec(t, s, "SELECT * FROM src_errors")
	}
	check(eng)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err = Open(store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(eng)
	s = eng.NewSession()
	mustExec(t, s, "DROP SOURCE src")
	mustExec(t, s, "DROP SINK out")
	mustExec(t, s, "DROP SOURCE IF EXISTS src")
	if got := queryText(t, s, "SHOW SOURCES"); got != "" {
		t.Errorf("sources after DROP = %q", got)
	}
	mustExec(t, s, "DROP TABLE t CASCADE")
	eng.Close()
}

// TestIngestTruncate empties tables in the middle of a batch: changes
// before the truncate are gone with the stored rows, changes after it
// apply to the empty table, and a view sees only the net change.
func TestIngestTruncate(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	s := eng.NewSession()
	mustExec(t, s, "CREATE TABLE kv (k int PRIMARY KEY, v text)")
	mustExec(t, s, "CREATE TABLE bag (a int)")
	mustExec(t, s, "INSERT INTO kv VALUES (1, 'a'), (2, 'b')")
	mustExec(t, s, "INSERT INTO bag VALUES (1), (1), (2)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW n AS SELECT (SELECT count(*) FROM kv) AS kv, (SELECT count(*) FROM bag) AS bag")
	_, err := eng.Ingest(context.Background(), &Ingest{Source: "src", Progress: []byte("p"), Changes: []RowChange{
		{Table: "kv", Op: Insert, Row: textRow("3", "c")},
		{Table: "kv", Op: Truncate},
		{Table: "kv", Op: Insert, Row: textRow("1", "again")},
		{Table: "bag", Op: Truncate},
		{Table: "bag", Op: Truncate},
		{Table: "bag", Op: Insert, Row: textRow("5")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, s, "SELECT * FROM kv ORDER BY k"); got != "1,again" {
		t.Errorf("kv = %q", got)
	}
	if got := queryText(t, s, "SELECT * FROM bag"); got != "5" {
		t.Errorf("bag = %q", got)
	}
	if got := queryText(t, s, "SELECT * FROM n"); got != "1,1" {
		t.Errorf("n = %q", got)
	}
}
