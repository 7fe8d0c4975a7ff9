package lake

import (
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestClassify walks testdata/classify.txt: each statement text and the
// kinds and plans Classify gives it (one line per statement).
func TestClassify(t *testing.T) {
	datadriven.RunTest(t, "testdata/classify.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "classify" {
			t.Fatalf("%s: unknown directive %q", d.Pos, d.Cmd)
		}
		stmts, err := Classify(d.Input)
		if err != nil {
			se := asSQLError(err)
			return "error " + se.code + " " + se.msg
		}
		var lines []string
		for _, st := range stmts {
			lines = append(lines, st.String())
		}
		return strings.Join(lines, "\n")
	})
}

// TestEveryKindHasExample keeps the documented list of kinds complete:
// every kind is classified at least once in testdata/classify.txt and
// named in docs/lake.md.
func TestEveryKindHasExample(t *testing.T) {
	golden, err := os.ReadFile("testdata/classify.txt")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/lake.md")
	if err != nil {
		t.Fatal(err)
	}
	for k := Kind(0); k < numKinds; k++ {
		if !strings.Contains(string(golden), "\n"+k.String()) {
			t.Errorf("kind %s has no example in testdata/classify.txt", k)
		}
		if !strings.Contains(string(doc), "`"+k.String()+"`") {
			t.Errorf("kind %s is not documented in docs/lake.md", k)
		}
	}
}
