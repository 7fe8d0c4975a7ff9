package gateway

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// jdbcJar is Debian's pgJDBC (libpostgresql-jdbc-java).
const jdbcJar = "/usr/share/java/postgresql.jar"

// TestJDBCCatalog runs pgJDBC's DatabaseMetaData.getTables, getColumns and getPrimaryKeys
// (testdata/jdbc/Meta.java, with the installed JDK) through the gateway
// against RockStream and against PostgreSQL, both holding the schema of
// testdata/clients/schema.sql: the driver must report the same tables,
// views, materialized views, columns and primary keys.
func TestJDBCCatalog(t *testing.T) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no JDK")
	}
	if _, err := os.Stat(jdbcJar); err != nil {
		t.Skip("pgJDBC is not installed")
	}
	pgtest.Require(t)
	classes := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, javac, "-cp", jdbcJar, "-d", classes, "testdata/jdbc/Meta.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	schema, err := os.ReadFile("../../testdata/clients/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{})
	addr, db := pgAddr(t, pgtest.NewDatabase(t, "gwjdbc"))
	pgHost, pgPort, _ := strings.Cut(addr, ":")
	// A primary key of several columns, in an order other than the
	// table's, for getPrimaryKeys' KEY_SEQ.
	schema = append(schema, "CREATE TABLE order_lines (line int, order_id bigint, sku text, PRIMARY KEY (order_id, line));\n"...)
	psql(t, pgHost, pgPort, "postgres", db, string(schema))
	if out := psql(t, "127.0.0.1", ts.port(), "postgres", "rockstream", string(schema)); strings.Contains(out, "ERROR") {
		t.Fatalf("creating the schema: %s", out)
	}
	run := func(hostPort, db string) string {
		out, err := exec.CommandContext(ctx, "java", "-cp", jdbcJar+":"+classes, "Meta", hostPort, db).CombinedOutput()
		if err != nil {
			t.Fatalf("java Meta %s: %v\n%s", hostPort, err, out)
		}
		return string(out)
	}
	want := run(addr, db)
	got := run("127.0.0.1:"+ts.port(), "rockstream")
	sameAsPostgres(t, "DatabaseMetaData", got, want)
	for _, frag := range []string{
		"TABLE_SCHEM=public TABLE_NAME=totals TABLE_TYPE=MATERIALIZED VIEW",
		"TABLE_NAME=orders COLUMN_NAME=amount DATA_TYPE=2 TYPE_NAME=numeric COLUMN_SIZE=10 DECIMAL_DIGITS=2",
		"COLUMN_NAME=note DATA_TYPE=12 TYPE_NAME=varchar COLUMN_SIZE=40",
		"TABLE_NAME=order_lines COLUMN_NAME=order_id KEY_SEQ=1 PK_NAME=order_lines_pkey",
		"TABLE_NAME=order_lines COLUMN_NAME=line KEY_SEQ=2 PK_NAME=order_lines_pkey",
	} {
		if !strings.Contains(got, frag) {
			t.Errorf("DatabaseMetaData lacks %q:\n%s", frag, got)
		}
	}
}
