package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// crashedStore writes a store as a server leaves it when it is killed:
// 20,000 rows flushed to tables by a clean shutdown, then 200 rows
// inserted through a server (an epoch each, all acknowledged) that is
// killed, so that they are only in the write-ahead log. It returns the
// directory and the number of rows acknowledged.
func crashedStore(t *testing.T) (string, int) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	sqlMust(t, data, `CREATE TABLE t (k int PRIMARY KEY, v text);
CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n FROM t;
INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g`)
	s := startServer(t, "--storage", data)
	host, port, _ := strings.Cut(s.pgAddr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=test dbname=shop sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, repeat('y', 300))", 100000+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.wait(20 * time.Second)
	conn.Close(ctx)
	return data, 20200
}

// hashFiles returns the SHA-256 of every file under dir, by relative path.
func hashFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// named returns the files in dir ending with suffix, sorted.
func named(t *testing.T, dir, prefix, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), suffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("no %s*%s in %s", prefix, suffix, dir)
	}
	return out
}

// largest returns the largest of paths.
func largest(t *testing.T, paths []string) string {
	t.Helper()
	best, size := "", int64(-1)
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > size {
			best, size = p, info.Size()
		}
	}
	return best
}

func flipAt(t *testing.T, path string, frac float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[int(float64(len(b))*frac)] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noTrace fails if a command's output holds a Go stack trace.
func noTrace(t *testing.T, what string, out outcome) {
	t.Helper()
	for _, s := range []string{"goroutine ", ".go:", "stack trace", "panic"} {
		if strings.Contains(out.stdout+out.stderr, s) {
			t.Fatalf("%s printed %q:\nstdout:\n%s\nstderr:\n%s", what, s, out.stdout, out.stderr)
		}
	}
}

// TestDamagedStores damages copies of a store written by a killed server
// in the ways a user finds files lost or damaged. For each, doctor reports
// the damage as PROBLEM lines and exits 1 without changing a file, and
// opening the store to serve it is refused naming the file, without
// changing a file either, or (when what was lost held nothing
// acknowledged) serves every acknowledged row.
func TestDamagedStores(t *testing.T) {
	bin := binary(t)
	base, acked := crashedStore(t)
	run := func(args ...string) outcome { return runProg(t, t.TempDir(), "", bin, args...) }

	t.Run("intact", func(t *testing.T) {
		dir := copyDir(t, base)
		before := hashFiles(t, dir)
		for _, args := range [][]string{{"doctor", "--storage", dir}, {"doctor", "--storage", dir, "--deep"}} {
			out := run(args...)
			if out.exit != 0 || !strings.Contains(out.stdout, "healthy") {
				t.Fatalf("%v: exit %d\n%s%s", args, out.exit, out.stdout, out.stderr)
			}
			if after := hashFiles(t, dir); !maps.Equal(before, after) {
				t.Fatalf("%v changed the directory:\nbefore %v\nafter  %v", args, before, after)
			}
		}
		out := run("sql", "--storage", dir, "--csv", "-c", "SELECT n, (SELECT count(*) FROM t) FROM c")
		if want := fmt.Sprintf("n,count\n%d,%d\n", acked, acked); out.stdout != want {
			t.Fatalf("intact copy serves %q, want %q (%s)", out.stdout, want, out.stderr)
		}
	})

	cases := []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns what the error names; "" if nothing acknowledged is lost
	}{
		{"missing manifest marker", func(t *testing.T, dir string) string {
			os.Remove(named(t, dir, "marker.manifest.", "")[0])
			return "marker.manifest"
		}},
		{"newest write-ahead log removed", func(t *testing.T, dir string) string {
			logs := named(t, dir, "", ".log")
			os.Remove(logs[len(logs)-1])
			return "write-ahead log"
		}},
		{"oldest write-ahead log removed", func(t *testing.T, dir string) string {
			logs := named(t, dir, "", ".log")
			os.Remove(logs[0])
			return "?" // refused, or nothing it held was needed
		}},
		{"write-ahead log truncated", func(t *testing.T, dir string) string {
			w := largest(t, named(t, dir, "", ".log"))
			info, _ := os.Stat(w)
			os.Truncate(w, info.Size()/2)
			return filepath.Base(w)
		}},
		{"write-ahead log damaged at 95%", func(t *testing.T, dir string) string {
			w := largest(t, named(t, dir, "", ".log"))
			flipAt(t, w, 0.95)
			return filepath.Base(w)
		}},
		{"table data block damaged", func(t *testing.T, dir string) string {
			sst := largest(t, named(t, dir, "", ".sst"))
			flipAt(t, sst, 0.5)
			return filepath.Base(sst)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, base)
			want := c.damage(t, dir)
			before := hashFiles(t, dir)
			unchanged := func(what string) {
				t.Helper()
				if after := hashFiles(t, dir); !maps.Equal(before, after) {
					t.Fatalf("%s changed the directory:\nbefore %v\nafter  %v", what, before, after)
				}
			}
			doc := run("doctor", "--storage", dir, "--deep")
			noTrace(t, "doctor", doc)
			unchanged("doctor")
			serve := run("sql", "--storage", dir, "--csv", "-c", "SELECT n, (SELECT count(*) FROM t) FROM c")
			noTrace(t, "sql", serve)
			if want == "?" {
				if serve.exit == 0 {
					if w := fmt.Sprintf("n,count\n%d,%d\n", acked, acked); serve.stdout != w {
						t.Fatalf("served %q, want %q", serve.stdout, w)
					}
					if doc.exit != 0 {
						t.Fatalf("doctor found problems in a store that serves everything:\n%s", doc.stdout)
					}
					return
				}
				want = "write-ahead log"
			}
			if doc.exit != 1 || !strings.Contains(doc.stdout, "PROBLEM: ") || !strings.Contains(doc.stdout, want) {
				t.Fatalf("doctor: exit %d, want 1 with a PROBLEM naming %q\nstdout:\n%s\nstderr:\n%s", doc.exit, want, doc.stdout, doc.stderr)
			}
			if serve.exit == 0 || !strings.Contains(serve.stderr, want) || !strings.Contains(serve.stderr, "checkpoint restore") {
				t.Fatalf("opening the damaged store: exit %d, want a refusal naming %q and the way out\nstdout:\n%s\nstderr:\n%s", serve.exit, want, serve.stdout, serve.stderr)
			}
			unchanged("a refused open")
			t.Log(strings.TrimSpace(serve.stderr))
		})
	}

	t.Run("start refuses", func(t *testing.T) {
		dir := copyDir(t, base)
		os.Remove(named(t, dir, "marker.manifest.", "")[0])
		before := hashFiles(t, dir)
		s := launch(t, "--storage", dir)
		if code := s.wait(30 * time.Second); code != exitUsage {
			t.Fatalf("start on a damaged store: exit %d, want %d\n%s", code, exitUsage, s.stderr())
		}
		if !strings.Contains(s.stderr(), "marker.manifest") || !strings.Contains(s.stderr(), "checkpoint restore") {
			t.Fatalf("start does not name the missing file:\n%s", s.stderr())
		}
		if after := hashFiles(t, dir); !maps.Equal(before, after) {
			t.Fatalf("start changed the refused directory:\nbefore %v\nafter  %v", before, after)
		}
	})

	t.Run("checkpoint create refuses damage", func(t *testing.T) {
		dir := copyDir(t, base)
		flipAt(t, largest(t, named(t, dir, "", ".sst")), 0.5)
		bucket := filepath.Join(t.TempDir(), "backups")
		out := run("checkpoint", "create", "--storage", dir, "--to", "file://"+bucket)
		noTrace(t, "checkpoint create", out)
		if out.exit == 0 || !strings.Contains(out.stderr, ".sst") {
			t.Fatalf("checkpoint of a damaged store: exit %d\n%s%s", out.exit, out.stdout, out.stderr)
		}
		if _, err := os.Stat(filepath.Join(bucket, "latest")); !os.IsNotExist(err) {
			t.Fatalf("a checkpoint was made of a damaged store (%v)", err)
		}
	})
}

// TestCommandsNeedAStore: doctor and checkpoint create on a path that holds
// no store refuse, and create nothing; a failed restore leaves no
// directory behind, neither its source nor its target.
func TestCommandsNeedAStore(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	typo := filepath.Join(root, "dta")
	for _, args := range [][]string{
		{"doctor", "--storage", typo},
		{"checkpoint", "create", "--storage", typo, "--to", "file://" + filepath.Join(root, "backups")},
		{"checkpoint", "restore", "--from", "file://" + filepath.Join(root, "no-backups"), "--storage", filepath.Join(root, "new", "data")},
	} {
		out := runProg(t, root, "", bin, args...)
		if out.exit == 0 || out.exit == 1 && args[0] == "doctor" {
			t.Fatalf("%v: exit %d\n%s%s", args, out.exit, out.stdout, out.stderr)
		}
		if !strings.Contains(out.stderr, "does not hold a RockStream store") && !strings.Contains(out.stderr, "there is no checkpoint") {
			t.Fatalf("%v: %s", args, out.stderr)
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Fatalf("%v created %v", args, entries)
		}
	}
}
