package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStorageLifecycle runs the commands a user runs on a storage
// directory: SQL across restarts, doctor, a checkpoint, a second
// incremental one, a restore, and doctor on a damaged copy.
func TestStorageLifecycle(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	must := func(want int, args ...string) outcome {
		t.Helper()
		out := runProg(t, dir, "", bin, args...)
		if out.exit != want {
			t.Fatalf("rockstream %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.exit, want, out.stdout, out.stderr)
		}
		return out
	}
	must(0, "sql", "--storage", data, "-c",
		"CREATE TABLE t (k int PRIMARY KEY, g text); CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g; INSERT INTO t VALUES (1, 'a'), (2, 'a'), (3, 'b')")
	must(0, "sql", "--storage", data, "-c", "INSERT INTO t VALUES (4, 'b')")
	out := must(0, "sql", "--storage", data, "--csv", "-c", "SELECT * FROM v ORDER BY g")
	if out.stdout != "g,n\na,2\nb,2\n" {
		t.Fatalf("view after restart:\n%s", out.stdout)
	}
	out = must(0, "doctor", "--storage", data, "--deep")
	// The first -c string is one transaction (one epoch), as psql -c's.
	if !strings.Contains(out.stdout, "healthy") || !strings.Contains(out.stdout, "frontier: epoch 2") {
		t.Fatalf("doctor:\n%s", out.stdout)
	}

	url := "file://" + filepath.Join(dir, "backups")
	must(0, "checkpoint", "create", "--storage", data, "--to", url)
	must(0, "sql", "--storage", data, "-c", "DELETE FROM t WHERE k = 1")
	must(0, "checkpoint", "create", "--storage", data, "--to", url)
	restored := filepath.Join(dir, "restored")
	must(0, "checkpoint", "restore", "--from", url, "--storage", restored)
	out = must(0, "sql", "--storage", restored, "--csv", "-c", "SELECT * FROM v ORDER BY g")
	if out.stdout != "g,n\na,1\nb,2\n" {
		t.Fatalf("view in the restored store:\n%s", out.stdout)
	}
	must(1, "checkpoint", "restore", "--from", url, "--storage", restored)

	// Damage every table file of the restored copy: start-up must refuse
	// it, naming a file, rather than serve wrong data.
	ssts, _ := filepath.Glob(filepath.Join(restored, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table files in the restored store")
	}
	for _, f := range ssts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(b); i += 7 {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out = runProg(t, dir, "", bin, "doctor", "--storage", restored, "--deep")
	if out.exit == 0 || !strings.Contains(out.stderr+out.stdout, ".sst") {
		t.Fatalf("doctor on a damaged store: exit %d\nstdout:\n%s\nstderr:\n%s", out.exit, out.stdout, out.stderr)
	}
	out = runProg(t, dir, "", bin, "sql", "--storage", restored, "-c", "SELECT * FROM v")
	if out.exit == 0 {
		t.Fatalf("sql on a damaged store succeeded:\n%s", out.stdout)
	}
}
