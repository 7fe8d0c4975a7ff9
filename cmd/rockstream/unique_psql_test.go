package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// uniqueSetup creates tables with UNIQUE constraints and writes through
// ON CONFLICT on them; its errors (messages, DETAIL, HINT) must be
// PostgreSQL's.
const uniqueSetup = `CREATE TABLE t (id int PRIMARY KEY, a int UNIQUE, b int, c int, UNIQUE (b, c), CONSTRAINT named_u UNIQUE NULLS NOT DISTINCT (c));
CREATE TABLE t_a_key1 (x int);
CREATE TABLE n (k int, v text);
CREATE UNIQUE INDEX n_k ON n (k);
ALTER TABLE n ADD UNIQUE (v);
INSERT INTO t VALUES (1, 1, 1, 1), (2, 2, 2, 2);
INSERT INTO t VALUES (3, 1, 3, 3);
INSERT INTO t VALUES (3, 3, 3, 2);
INSERT INTO t VALUES (3, 3, 1, 1);
INSERT INTO t VALUES (3, 1, 3, 3) ON CONFLICT (a) DO UPDATE SET b = excluded.b + 10 RETURNING *;
INSERT INTO t VALUES (4, 4, 4, 4), (5, 4, 5, 5) ON CONFLICT (a) DO UPDATE SET b = excluded.b;
INSERT INTO t VALUES (4, 4, 4, 4) ON CONFLICT (b) DO NOTHING;
INSERT INTO t VALUES (4, 4, 4, 4) ON CONFLICT ON CONSTRAINT nope DO NOTHING;
INSERT INTO t VALUES (4, 4, 4, 4) ON CONFLICT ON CONSTRAINT named_u DO NOTHING;
INSERT INTO n VALUES (1, 'x'), (2, 'y');
INSERT INTO n VALUES (1, 'z') ON CONFLICT ON CONSTRAINT n_k DO NOTHING;
INSERT INTO n VALUES (1, 'z') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
DROP INDEX t_a_key;
ALTER TABLE t ADD UNIQUE (a);
ALTER TABLE t ADD CONSTRAINT dup UNIQUE (b);
ALTER TABLE t DROP CONSTRAINT t_a_key2;
ALTER TABLE t DROP CONSTRAINT nope;
ALTER TABLE t DROP CONSTRAINT IF EXISTS nope;
INSERT INTO n VALUES (3, 'z');
ALTER TABLE n ADD CONSTRAINT n_k_again UNIQUE (k);
CREATE TABLE gone (g int UNIQUE, h int);
ALTER TABLE gone DROP CONSTRAINT gone_g_key;
INSERT INTO gone VALUES (1, 1), (1, 2);
`

// uniqueCheck shows the tables as psql's \d does and their rows.
const uniqueCheck = `\d t
\d n
\d gone
SELECT * FROM t ORDER BY id;
SELECT * FROM n ORDER BY k;
INSERT INTO t VALUES (9, 9, 9, 1);
INSERT INTO n VALUES (9, 'z');
`

// TestUniqueConstraintsMatchPsql runs the same statements through psql
// against `rockstream start` and against PostgreSQL 15, before and after
// a restart of rockstream: psql's output (\d included) and its errors
// must be the same.
func TestUniqueConstraintsMatchPsql(t *testing.T) {
	psqlPath(t)
	dir := t.TempDir()
	for name, text := range map[string]string{"setup.sql": uniqueSetup, "check.sql": uniqueCheck} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pg := pgtest.NewDatabase(t, "unique")
	data := filepath.Join(t.TempDir(), "data")
	s := startServer(t, "--storage", data)
	rs := s.psqlConn("rockstream", "unique")
	samePsqlOutput(t, "setup", psqlRun(t, dir, "", rs, "-f", "setup.sql"), psqlRun(t, dir, "", pg, "-f", "setup.sql"))
	want := psqlRun(t, dir, "", pg, "-f", "check.sql")
	samePsqlOutput(t, "check", psqlRun(t, dir, "", rs, "-f", "check.sql"), want)

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(30 * time.Second); code != 0 {
		t.Fatalf("rockstream start exited with %d:\n%s", code, s.stderr())
	}
	s = startServer(t, "--storage", data)
	samePsqlOutput(t, "check after restart", psqlRun(t, dir, "", s.psqlConn("rockstream", "unique"), "-f", "check.sql"), want)
}

// samePsqlOutput fails t unless psql printed the same against both
// servers: its stdout, its stderr (the errors) and its exit status.
func samePsqlOutput(t *testing.T, what string, got, want outcome) {
	t.Helper()
	if got.stdout != want.stdout || got.stderr != want.stderr || got.exit != want.exit {
		t.Errorf("%s: psql's output differs\n--- rockstream (exit %d):\n%s%s\n--- PostgreSQL (exit %d):\n%s%s",
			what, got.exit, got.stdout, got.stderr, want.exit, want.stdout, want.stderr)
	}
	if want.stderr == "" || want.stdout == "" {
		t.Errorf("%s: psql printed no rows or no errors; the script tests nothing", what)
	}
}
