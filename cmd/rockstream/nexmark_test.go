package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestNexmarkScript runs the script "rockstream nexmark" prints through
// "rockstream sql", and its --postgres version through psql against
// PostgreSQL, and compares what the views hold, byte for byte.
func TestNexmarkScript(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	args := []string{"nexmark", "--events", "3000", "--batch", "500", "--rate", "20", "--queries", "q3,q5,q7,q9,Q11,q22"}
	script := runProg(t, dir, "", bin, args...)
	if script.exit != 0 || script.stderr != "" {
		t.Fatalf("rockstream %s: exit %d: %s", strings.Join(args, " "), script.exit, script.stderr)
	}
	pgScript := runProg(t, dir, "", bin, append(args, "--postgres")...)
	if pgScript.exit != 0 {
		t.Fatalf("--postgres: exit %d: %s", pgScript.exit, pgScript.stderr)
	}
	if !strings.Contains(script.stdout, "HOP(bid, date_time") || strings.Contains(pgScript.stdout, "HOP(") ||
		!strings.Contains(script.stdout, "lateness = ") || strings.Contains(pgScript.stdout, "lateness") {
		t.Fatalf("scripts not in their dialects:\n%.2000s", script.stdout)
	}
	for name, text := range map[string]string{"rockstream.sql": script.stdout, "postgres.sql": pgScript.stdout} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reads := "SELECT * FROM q3 ORDER BY id;\n" +
		"SELECT * FROM q5 ORDER BY auction, num;\n" +
		"SELECT * FROM q7 ORDER BY date_time, auction, bidder;\n" +
		"SELECT * FROM q9 ORDER BY id;\n" +
		"SELECT * FROM q11 ORDER BY bidder, starttime;\n" +
		"SELECT count(*), count(DISTINCT dir1) FROM q22;\n"
	want := psqlRun(t, dir, reads, pgtest.NewDatabase(t, "cli"), "-f", "postgres.sql", "-f", "-")
	got := runProg(t, dir, reads, bin, "sql", "-f", "rockstream.sql", "-f", "-")
	compare(t, "nexmark script", got, want)
	if n := len(rowCounts.FindAllString(got.stdout, -1)); n != 6 || strings.Contains(got.stdout, "(0 rows)") {
		t.Errorf("a view is empty:\n%s", got.stdout)
	}
}

// rowCounts matches psql's row count footer.
var rowCounts = regexp.MustCompile(`\(\d+ rows?\)`)

func TestNexmarkUsage(t *testing.T) {
	bin := binary(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"nexmark", "--queries", "q12"}, "q12 is not supported: processing time"},
		{[]string{"nexmark", "--queries", "q23"}, `unknown query "q23"`},
		{[]string{"nexmark", "--batch", "0"}, "--batch and --rate must be positive"},
	} {
		out := runProg(t, t.TempDir(), "", bin, c.args...)
		if out.exit != 2 || !strings.Contains(out.stderr, c.msg) {
			t.Errorf("rockstream %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), out.exit, out.stderr, c.msg)
		}
	}
}
