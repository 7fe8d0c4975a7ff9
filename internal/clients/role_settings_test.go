package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// roleSettingsScript stores setting defaults for roles and the database,
// then shows them as psql's \drds and pg_roles.rolconfig do. Run as a
// superuser; :"DBNAME" is the database psql is connected to.
const roleSettingsScript = `
CREATE ROLE rs_ann LOGIN;
CREATE ROLE rs_bob LOGIN;
CREATE ROLE rs_admin LOGIN CREATEROLE;
ALTER ROLE rs_ann SET work_mem = '64MB';
ALTER ROLE rs_ann SET TimeZone = 'Europe/Paris';
ALTER ROLE rs_ann SET search_path = a, "B";
ALTER ROLE rs_ann SET work_mem = '32MB';
ALTER ROLE rs_ann IN DATABASE :"DBNAME" SET TimeZone = 'Asia/Tokyo';
ALTER ROLE rs_bob SET application_name = 'bobapp';
ALTER ROLE rs_bob SET statement_timeout = '5s';
ALTER ROLE rs_bob RESET statement_timeout;
ALTER DATABASE :"DBNAME" SET TimeZone = 'America/New_York';
ALTER DATABASE :"DBNAME" SET work_mem = '8MB';
ALTER ROLE rs_ann SET nosuch_setting = 1;
\drds rs_*
SELECT rolname, rolconfig FROM pg_roles WHERE rolname LIKE 'rs\_%' ORDER BY 1;
`

// roleSettingsLogins are what each role sees after logging in: the
// role+database entry over the role's over the database's.
const roleSettingsLogins = `SELECT current_setting('TimeZone'), current_setting('work_mem'), current_setting('search_path'), current_setting('application_name')`

// roleSettingsDenied are changes the role rs_bob may not make, and one it
// may (its own settings), and those rs_admin (CREATEROLE) may.
var roleSettingsDenied = []struct{ user, sql string }{
	{"rs_bob", "ALTER ROLE rs_ann SET work_mem = '1MB'"},
	{"rs_bob", "ALTER ROLE rs_bob SET work_mem = '2MB'"},
	{"rs_bob", `ALTER DATABASE :"DBNAME" SET work_mem = '1MB'`},
	{"rs_admin", "ALTER ROLE rs_ann SET work_mem = '3MB'"},
	{"rs_admin", "ALTER ROLE rockstream SET work_mem = '3MB'"},
	{"rs_bob", "ALTER ROLE ALL SET work_mem = '3MB'"},
}

// TestRoleSettingsMatchPostgres checks that ALTER ROLE/DATABASE ... SET
// and RESET store, show (\drds, rolconfig) and apply at login what
// PostgreSQL does, with the same privilege errors.
func TestRoleSettingsMatchPostgres(t *testing.T) {
	psql := requireTool(t, "psql")
	rs, pg := bootstrapRolePair(t, psql)
	// Roles are the cluster's, shared by the reference's databases.
	cleanup := func() {
		runCombined(t, pg, ".", psql, "-X", "-q", "-c", "DROP ROLE IF EXISTS rs_ann", "-c", "DROP ROLE IF EXISTS rs_bob", "-c", "DROP ROLE IF EXISTS rs_admin",
			"-c", "ALTER ROLE rockstream RESET ALL")
	}
	cleanup()
	t.Cleanup(cleanup)
	// RockStream's one database answers to any name: the same as the
	// reference's, so that \drds prints alike.
	rs.database = pg.database
	script := filepath.Join(t.TempDir(), "settings.sql")
	if err := os.WriteFile(script, []byte(roleSettingsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	show := func(e endpoint) string {
		return runCombined(t, e, ".", psql, "-X", "-f", script)
	}
	if got, want := show(rs), show(pg); got != want {
		t.Errorf("settings differ from PostgreSQL's\nRockStream:\n%s\nPostgreSQL:\n%s", got, want)
	}
	login := func(e endpoint, user string) string {
		e.user = user
		return runCombined(t, e, ".", psql, "-X", "-A", "-c", roleSettingsLogins)
	}
	for _, user := range []string{"rs_ann", "rs_bob", "rs_admin"} {
		if got, want := login(rs, user), login(pg, user); got != want {
			t.Errorf("%s's settings at login differ\nRockStream:\n%s\nPostgreSQL:\n%s", user, got, want)
		}
	}
	for _, d := range roleSettingsDenied {
		run := func(e endpoint) string {
			e.user = d.user
			return runCombined(t, e, ".", psql, "-X", "-c", strings.ReplaceAll(d.sql, `:"DBNAME"`, `"`+e.database+`"`))
		}
		if got, want := run(rs), run(pg); got != want {
			t.Errorf("%s as %s: RockStream says %q, PostgreSQL %q", d.sql, d.user, got, want)
		}
	}
	// DROP ROLE removes the role's settings.
	drop := func(e endpoint) string {
		return runCombined(t, e, ".", psql, "-X", "-c", "DROP ROLE rs_bob", "-c", `\drds rs_*`)
	}
	if got, want := drop(rs), drop(pg); got != want {
		t.Errorf("after DROP ROLE\nRockStream:\n%s\nPostgreSQL:\n%s", got, want)
	}
}
