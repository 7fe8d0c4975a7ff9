package diff

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

func testPlan(t *testing.T) plan.Node {
	t.Helper()
	pp := planParser{tables: map[string][]plan.Column{
		"t": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Text)}},
		"u": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Int4)}},
	}}
	p, err := pp.parse(`
aggregate group=(b) aggs=(count(*), min(c), count(distinct c))
  join on (a = a)
    scan t
    distinct
      scan u
`)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func row(t *testing.T, cols []plan.Column, s string) zset.Row {
	t.Helper()
	r, err := parseRow(s, cols)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRebuiltCircuitFindsItsState checks that operator ids are stable: a
// circuit built again from the same plan (as after a restart) continues
// from the state the first one left.
func TestRebuiltCircuitFindsItsState(t *testing.T) {
	p := testPlan(t)
	tc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}
	uc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Int4)}}
	st := state.NewMemory()
	first := map[string]zset.Batch{
		"t": {{Row: row(t, tc, "1, 'x'"), Weight: 1}, {Row: row(t, tc, "2, 'y'"), Weight: 1}},
		"u": {{Row: row(t, uc, "1, 7"), Weight: 1}, {Row: row(t, uc, "2, 7"), Weight: 2}},
	}
	second := map[string]zset.Batch{
		"t": {{Row: row(t, tc, "1, 'x'"), Weight: -1}},
		"u": {{Row: row(t, uc, "2, 3"), Weight: 1}, {Row: row(t, uc, "2, 7"), Weight: -1}},
	}
	c1, err := Build(p, []byte("view/"), false)
	if err != nil {
		t.Fatal(err)
	}
	out1, err := c1.Step(context.Background(), st, first)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Build(p, []byte("view/"), false)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := c2.Step(context.Background(), st, second)
	if err != nil {
		t.Fatal(err)
	}
	view := mustConsolidate(t, append(append(zset.Batch(nil), out1...), out2...))
	all := map[string]zset.Batch{}
	for _, in := range []map[string]zset.Batch{first, second} {
		for rel, b := range in {
			all[rel] = mustConsolidate(t, append(all[rel], b...))
		}
	}
	batch, err := batchEval(p, false, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(view) == 0 {
		t.Fatal("empty view: the test exercises nothing")
	}
	if got, want := render(view, p.Columns()), render(batch, p.Columns()); got != want {
		t.Fatalf("rebuilt circuit:\n%s\nbatch:\n%s", got, want)
	}
	// Every key is under the circuit's prefix.
	_ = st.Scan(nil, nil, func(k, _ []byte) bool {
		if !bytes.HasPrefix(k, []byte("view/")) {
			t.Errorf("key %q outside the circuit's prefix", k)
		}
		return true
	})
}

func TestRelations(t *testing.T) {
	c, err := Build(testPlan(t), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Relations(); !slices.Equal(got, []string{"t", "u"}) {
		t.Fatalf("Relations() = %v", got)
	}
}

// TestStepLeavesInputsAlone checks that Step neither reorders nor
// consolidates the caller's batches.
func TestStepLeavesInputsAlone(t *testing.T) {
	c, err := Build(testPlan(t), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	tc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}
	in := zset.Batch{
		{Row: row(t, tc, "2, 'y'"), Weight: 1},
		{Row: row(t, tc, "1, 'x'"), Weight: 1},
		{Row: row(t, tc, "2, 'y'"), Weight: -1},
	}
	before := render(in, []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}})
	if _, err := c.Step(context.Background(), state.NewMemory(), map[string]zset.Batch{"t": in}); err != nil {
		t.Fatal(err)
	}
	if after := render(in, []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}); after != before {
		t.Fatalf("Step changed its input:\n%s\nwas:\n%s", after, before)
	}
}

// TestIdentityProjectionPassesItsInputOn checks that a projection keeping
// every column of an aggregate's output in order passes the aggregate's
// batch on instead of copying and consolidating it again, with the same
// result as the aggregate alone, and that one that reorders the columns
// or reads a relation's delta still computes its own.
func TestIdentityProjectionPassesItsInputOn(t *testing.T) {
	tables := map[string][]plan.Column{
		"t": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Text)}},
	}
	build := func(text string) *Circuit { return buildText(t, tables, text) }
	const agg = "aggregate group=(b) aggs=(count(*), sum(a))\n"
	tc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}
	in := zset.Batch{
		{Row: row(t, tc, "2, 'y'"), Weight: 1},
		{Row: row(t, tc, "1, 'x'"), Weight: 1},
		{Row: row(t, tc, "3, 'y'"), Weight: 2},
	}
	step := func(c *Circuit) string {
		out, err := c.Step(context.Background(), state.NewMemory(), map[string]zset.Batch{"t": in})
		if err != nil {
			t.Fatal(err)
		}
		return render(out, []plan.Column{{Type: types.Of(types.Text)}, {Type: types.Of(types.Int8)}, {Type: types.Of(types.Int8)}})
	}
	for _, k := range []struct {
		text string
		pass bool
	}{
		{"project b, count, sum\n  " + agg + "    scan t", true},
		{"project b, sum, count\n  " + agg + "    scan t", false},
		{"project a, b\n  scan t", false},
	} {
		c := build(k.text)
		op, ok := c.nodes[c.root].op.(*ops.Project)
		if !ok {
			t.Fatalf("%q: the root is %T, not a projection", k.text, c.nodes[c.root].op)
		}
		if op.PassThrough != k.pass {
			t.Fatalf("%q: PassThrough %v, want %v", k.text, op.PassThrough, k.pass)
		}
	}
	if got, want := step(build("project b, count, sum\n  "+agg+"    scan t")), step(build(agg+"  scan t")); got != want {
		t.Fatalf("the identity projection's output:\n%s\nthe aggregate's:\n%s", got, want)
	}
}

// buildText builds the circuit of a plan written in the tests' plan text
// over tables, under the prefix "v/".
func buildText(t testing.TB, tables map[string][]plan.Column, text string) *Circuit {
	t.Helper()
	p, err := (&planParser{tables: tables}).parse(text)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(p, []byte("v/"), false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
