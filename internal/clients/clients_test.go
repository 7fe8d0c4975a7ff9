package clients

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestPsycopg2(t *testing.T) {
	py := requireTool(t, "/usr/bin/python3")
	requirePython(t, py, "psycopg2")
	e := serverFor(t)
	expectOK(t, run(t, e, "py2", "testdata", "", py, "psycopg2_scenario.py"))
}

func TestPsycopg3(t *testing.T) {
	py := requireTool(t, "/usr/bin/python3")
	requirePython(t, py, "psycopg")
	e := serverFor(t)
	expectOK(t, run(t, e, "py3", "testdata", "", py, "psycopg3_scenario.py"))
}

func TestNodePostgres(t *testing.T) {
	node := requireTool(t, "node")
	npm := requireTool(t, "npm")
	dir := nodeModules(t, npm)
	e := serverFor(t)
	expectOK(t, run(t, e, "nd", dir, "", node, "scenario.js"))
}

func TestJDBC(t *testing.T) {
	const jar = "/usr/share/java/postgresql.jar"
	java, javac := requireTool(t, "java"), requireTool(t, "javac")
	requireFile(t, jar)
	classes := t.TempDir()
	run(t, endpoint{}, "", "testdata/java", "", javac, "-d", classes, "-cp", jar, "Scenario.java")
	e := serverFor(t)
	expectOK(t, run(t, e, "jv", ".", "", java, "-cp", classes+string(os.PathListSeparator)+jar, "Scenario", e.jdbcURL(), e.user))
}

// TestJDBCInBerlin runs the JDBC scenario in a JVM whose zone is
// Europe/Berlin: pgJDBC then sends TimeZone=Europe/Berlin in its startup
// message, which the session must accept.
func TestJDBCInBerlin(t *testing.T) {
	const jar = "/usr/share/java/postgresql.jar"
	java, javac := requireTool(t, "java"), requireTool(t, "javac")
	requireFile(t, jar)
	classes := t.TempDir()
	run(t, endpoint{}, "", "testdata/java", "", javac, "-d", classes, "-cp", jar, "Scenario.java")
	e := serverFor(t)
	expectOK(t, run(t, e, "jb", ".", "", java, "-Duser.timezone=Europe/Berlin", "-cp", classes+string(os.PathListSeparator)+jar, "Scenario", e.jdbcURL(), e.user))
}

// TestPgcli runs pgcli non-interactively, then the catalog queries it runs
// to build its completions, through pgcli's own code.
func TestPgcli(t *testing.T) {
	pgcli := requireTool(t, "pgcli")
	py := requireTool(t, "/usr/bin/python3")
	e := serverFor(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	mv := "MATERIALIZED VIEW"
	if e.postgres {
		mv = "VIEW"
	}
	out := run(t, e, "pc", ".", `CREATE TABLE pc_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2));
CREATE `+mv+` pc_totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM pc_orders GROUP BY customer;
INSERT INTO pc_orders VALUES (1, 'alice', 2.50), (2, 'alice', 1.25);
SELECT customer, total, n FROM pc_totals;
`, pgcli, "--less-chatty", "--row-limit", "0", "-h", e.host, "-p", strconv.Itoa(e.port), "-U", e.user, e.database)
	for _, want := range []string{"| customer | total | n |", "| alice    | 3.75  | 2 |", "SELECT 1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("pgcli output lacks %q:\n%s", want, out)
		}
	}
	expectOK(t, run(t, e, "pc", "testdata", "", py, "pgcli_completion.py"))
}

// requirePython skips (or fails, see requireTool) when a Python module is
// missing.
func requirePython(t *testing.T, py, module string) {
	t.Helper()
	if err := exec.Command(py, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("ROCKSTREAM_REQUIRE_CLIENTS") == "1" {
			t.Fatalf("ROCKSTREAM_REQUIRE_CLIENTS=1 but Python module %s is missing", module)
		}
		t.Skipf("skipping: Python module %s is missing", module)
	}
}

// nodeModules installs the node scenario's locked dependencies into a
// cache directory keyed by the lock file (once per lock file version) and
// returns the directory holding scenario.js and its node_modules.
func nodeModules(t *testing.T, npm string) string {
	t.Helper()
	lock, err := os.ReadFile("testdata/node/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "rockstream-clients", "node-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "package-lock.json", "scenario.js"} {
		b, err := os.ReadFile(filepath.Join("testdata/node", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "pg")); err != nil {
		run(t, endpoint{}, "", dir, "", npm, "ci", "--no-audit", "--no-fund")
	}
	return dir
}
