package oracle

import (
	"strings"
	"testing"
)

func s(v string) *string { return &v }

func rows(rs ...[]*string) [][]*string { return rs }

func TestDiffMultisets(t *testing.T) {
	a := []*string{s("1"), s("x")}
	b := []*string{s("2"), nil}
	c := []*string{s("2"), s("NULL")}
	// Rows that differ only in how values split must not collide.
	d1 := []*string{s("1:2"), s("3")}
	d2 := []*string{s("1"), s("2:3")}
	for _, tc := range []struct {
		name          string
		want, got     [][]*string
		missing, xtra int
	}{
		{"equal", rows(a, b, a), rows(a, a, b), 0, 0},
		{"empty", nil, rows(), 0, 0},
		{"duplicate missing", rows(a, a, b), rows(a, b), 1, 0},
		{"duplicate extra", rows(a, b), rows(b, a, a), 0, 1},
		{"null is not the text NULL", rows(b), rows(c), 1, 1},
		{"no collision", rows(d1), rows(d2), 1, 1},
		{"all missing", rows(a, b), nil, 2, 0},
	} {
		d := DiffMultisets(tc.want, tc.got)
		if len(d.Missing) != tc.missing || len(d.Extra) != tc.xtra {
			t.Errorf("%s: missing %d extra %d, want %d and %d", tc.name, len(d.Missing), len(d.Extra), tc.missing, tc.xtra)
		}
		if d.Empty() != (tc.missing == 0 && tc.xtra == 0) {
			t.Errorf("%s: Empty() = %v", tc.name, d.Empty())
		}
	}
}

func TestDiffFormat(t *testing.T) {
	d := DiffMultisets(
		rows([]*string{s("1"), s("a b")}, []*string{s("1"), s("a b")}, []*string{s("2"), nil}),
		rows([]*string{s("1"), s("a b")}, []*string{s("2"), s("NULL")}, []*string{s("3"), s("")}),
	)
	got := d.Format("postgres", "rockstream")
	want := `    missing from rockstream (postgres has them) (2 rows):
      (1 | a b)
      (2 | NULL)
    extra in rockstream (postgres does not have them) (2 rows):
      (2 | "NULL")
      (3 | "")
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCompareRowsOrdered(t *testing.T) {
	one, two := []*string{s("1")}, []*string{s("2")}
	if d := compareRows(rows(one, two), rows(two, one), false, "a", "b"); d != "" {
		t.Errorf("unordered comparison saw a difference: %s", d)
	}
	d := compareRows(rows(one, two), rows(two, one), true, "a", "b")
	if !strings.Contains(d, "different order") || !strings.Contains(d, "row 1") {
		t.Errorf("ordered comparison: %q", d)
	}
	if d := compareRows(rows(one, two), rows(one, two), true, "a", "b"); d != "" {
		t.Errorf("equal sequences differ: %s", d)
	}
}

func TestCompareColumns(t *testing.T) {
	a := []Column{{"a", 23}, {"count", 20}}
	if d := compareColumns(a, []Column{{"a", 23}, {"count", 20}}); d != "" {
		t.Errorf("equal columns differ: %s", d)
	}
	d := compareColumns(a, []Column{{"a", 23}, {"count", 1700}})
	if !strings.Contains(d, "count bigint") || !strings.Contains(d, "count numeric") {
		t.Errorf("got %q", d)
	}
	if d := compareColumns(a, nil); !strings.Contains(d, "no result set") {
		t.Errorf("got %q", d)
	}
}
