package errs

import (
	"os"
	"regexp"
	"testing"
)

// TestCodesDocumented checks docs/errors.md against the table in codes.go:
// every code has one row with its SQLSTATE, and every row is a code.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^\| (RS\w+) \| (\w+) \|`).FindAllSubmatch(doc, -1)
	documented := map[Code]string{}
	for _, r := range rows {
		c := Code(r[1])
		if _, dup := documented[c]; dup {
			t.Errorf("docs/errors.md documents %s twice", c)
		}
		documented[c] = string(r[2])
	}
	for c, state := range sqlstates {
		if got, ok := documented[c]; !ok {
			t.Errorf("%s (%s) is not documented in docs/errors.md", c, state)
		} else if got != state {
			t.Errorf("docs/errors.md gives %s SQLSTATE %s, codes.go %s", c, got, state)
		}
	}
	for c := range documented {
		if _, ok := sqlstates[c]; !ok {
			t.Errorf("docs/errors.md documents %s, which codes.go does not define", c)
		}
	}
}
