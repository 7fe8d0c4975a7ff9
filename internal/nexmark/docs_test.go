package nexmark

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsPath is the user documentation of the benchmark; the section between
// the markers is generated from Queries.
var docsPath = filepath.Join("..", "..", "docs", "nexmark.md")

const (
	docsBegin = "<!-- BEGIN QUERIES: generated from internal/nexmark/queries.go by `go test ./internal/nexmark -run TestDocs -rewrite` -->\n"
	docsEnd   = "<!-- END QUERIES -->\n"
)

// TestDocs checks that docs/nexmark.md shows every query as the code
// defines it (-rewrite regenerates the section).
func TestDocs(t *testing.T) {
	raw, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", docsPath, docsBegin, docsEnd)
	}
	want := doc[:i+len(docsBegin)] + querySection() + doc[j:]
	if *rewrite {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != doc {
		t.Errorf("%s is out of date with queries.go; run go test ./internal/nexmark -run TestDocs -rewrite", docsPath)
	}
}

// querySection renders every query: its title, note and statement.
func querySection() string {
	var b strings.Builder
	for _, q := range Queries() {
		status := ""
		if q.Unsupported != "" {
			status = " (not supported)"
		}
		fmt.Fprintf(&b, "\n### %s: %s%s\n\n%s\n\n```sql\n%s;\n```\n", q.Name, q.Title, status, q.Note, q.CreateView())
	}
	b.WriteString("\n")
	return b.String()
}
