package clients

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of the psql tests")

// TestPsql runs the scenario as a psql script; what psql prints (results,
// COPY output, errors, \d output) is compared with psql_scenario.expected.
func TestPsql(t *testing.T) {
	if *target == "postgres" {
		t.Skip("the psql scenario uses SUBSCRIBE and materialized views; TestPsqlDescribeMatchesPostgres covers the reference")
	}
	psql := requireTool(t, "psql")
	e := serverFor(t)
	got := runCombined(t, e, "testdata", psql, "-X", "-q", "-f", "psql_scenario.sql")
	golden(t, "testdata/psql_scenario.expected", got)
}

// describeSchema is created in RockStream and in PostgreSQL; psql's
// describe commands must then print the same in both.
const describeSchema = `
CREATE TABLE ps_orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(10,2), placed date, note varchar(20));
CREATE TABLE ps_events (at timestamptz, kind text, payload bytea, ok boolean, score double precision);
CREATE VIEW ps_big AS SELECT id, amount FROM ps_orders WHERE amount > 5;
CREATE MATERIALIZED VIEW ps_totals AS SELECT customer, sum(amount) AS total, count(*) AS n FROM ps_orders GROUP BY customer;
`

// TestPsqlDescribeMatchesPostgres checks that psql's \d family prints the
// same for RockStream as for PostgreSQL over the same schema.
func TestPsqlDescribeMatchesPostgres(t *testing.T) {
	psql := requireTool(t, "psql")
	// The objects of both are owned by a role named rockstream, RockStream's
	// bootstrap superuser.
	rs, pg := bootstrapRolePair(t, psql)
	for _, e := range []endpoint{rs, pg} {
		runCombined(t, e, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", describeSchema)
	}
	// \dn differs by design: RockStream has the schema rockstream_catalog.
	for _, cmd := range []string{`\dt`, `\dv`, `\dm`, `\d ps_orders`, `\d+ ps_orders`, `\d ps_events`, `\d ps_big`, `\d ps_totals`} {
		want := runCombined(t, pg, ".", psql, "-X", "-c", cmd)
		got := runCombined(t, rs, ".", psql, "-X", "-c", cmd)
		if got != want {
			t.Errorf("psql %s differs from PostgreSQL's\nRockStream:\n%s\nPostgreSQL:\n%s", cmd, got, want)
		}
	}
}

// bootstrapRolePair returns a RockStream endpoint and a reference
// PostgreSQL one, both connecting as rockstream: RockStream's bootstrap
// superuser, which the reference cluster gets too.
func bootstrapRolePair(t *testing.T, psql string) (rs, pg endpoint) {
	t.Helper()
	rs = serverFor(t)
	pg = serverFor(t)
	if !pg.postgres {
		pg = postgresEndpoint(t)
	}
	createBootstrapRole(t, pg, psql)
	rs.user, pg.user = "rockstream", "rockstream"
	return rs, pg
}

// createBootstrapRole creates the superuser rockstream in the reference
// cluster e, unless it exists.
func createBootstrapRole(t *testing.T, e endpoint, psql string) {
	t.Helper()
	runCombined(t, e, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
		`DO $$BEGIN CREATE ROLE rockstream SUPERUSER LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$`)
}

// runCombined runs psql with its standard output and error in one stream,
// as a terminal shows them.
func runCombined(t *testing.T, e endpoint, dir, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = e.env("ps")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("running %s: %v", prog, err)
		}
		t.Logf("%s %s: %v", prog, strings.Join(args, " "), err)
	}
	return out.String()
}

// golden compares got with a golden file, rewriting it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// privilegeSchema creates roles and grants the same way in PostgreSQL
// and RockStream, for TestPsqlPrivilegesMatchPostgres.
const privilegeSchema = `
CREATE ROLE pp_reader;
CREATE ROLE pp_writer LOGIN CREATEROLE NOINHERIT;
CREATE TABLE pp_t (k int PRIMARY KEY, v text);
CREATE VIEW pp_v AS SELECT k FROM pp_t;
CREATE MATERIALIZED VIEW pp_m AS SELECT count(*) AS n FROM pp_t;
GRANT SELECT ON pp_t, pp_v TO pp_reader;
GRANT INSERT, UPDATE ON pp_t TO pp_writer WITH GRANT OPTION;
GRANT SELECT ON pp_m TO PUBLIC;
GRANT pp_reader TO pp_writer;
GRANT USAGE, CREATE ON SCHEMA public TO pp_writer;
`

// TestPsqlPrivilegesMatchPostgres checks that psql's \dp, \z, \du and
// \dn+ show the same owners, privileges, memberships and role
// attributes for RockStream as for PostgreSQL after the same statements.
func TestPsqlPrivilegesMatchPostgres(t *testing.T) {
	psql := requireTool(t, "psql")
	rs, pg := bootstrapRolePair(t, psql)
	for _, e := range []endpoint{rs, pg} {
		runCombined(t, e, ".", psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", privilegeSchema)
	}
	defer runCombined(t, pg, ".", psql, "-X", "-q", "-c",
		"DROP TABLE pp_t CASCADE; REVOKE ALL ON SCHEMA public FROM pp_writer; DROP ROLE pp_writer, pp_reader")
	for _, cmd := range []string{`\dp`, `\z pp_t`, `\du pp_*`, `\dn+ public`} {
		want := runCombined(t, pg, ".", psql, "-X", "-c", cmd)
		got := runCombined(t, rs, ".", psql, "-X", "-c", cmd)
		if got != want {
			t.Errorf("psql %s differs from PostgreSQL's\nRockStream:\n%s\nPostgreSQL:\n%s", cmd, got, want)
		}
	}
}
