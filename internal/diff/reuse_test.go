package diff

import (
	"context"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

func reusePlan(t *testing.T, text string) plan.Node {
	t.Helper()
	pp := planParser{tables: map[string][]plan.Column{
		"t": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Text)}},
		"u": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Int4)}},
	}}
	p, err := pp.parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sameName(rel string) (string, bool) { return rel, true }

// TestReuseTakesOverUnchangedOperators: a circuit whose aggregate changed
// over the same join takes over the join's and the distinct's state (same
// ids and identities), recomputes the aggregate alone from the join's
// contents, reads no relation, and then goes on equal to a batch
// evaluation of its plan.
func TestReuseTakesOverUnchangedOperators(t *testing.T) {
	old := reusePlan(t, `
aggregate group=(b) aggs=(count(*))
  join on (a = a)
    scan t
    distinct
      scan u
`)
	next := reusePlan(t, `
aggregate group=(b) aggs=(count(*), min(c), count(distinct c))
  join on (a = a)
    scan t
    distinct
      scan u
`)
	tc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Text)}}
	uc := []plan.Column{{Type: types.Of(types.Int4)}, {Type: types.Of(types.Int4)}}
	first := map[string]zset.Batch{
		"t": {{Row: row(t, tc, "1, 'x'"), Weight: 1}, {Row: row(t, tc, "2, 'y'"), Weight: 1}, {Row: row(t, tc, "2, 'x'"), Weight: 1}},
		"u": {{Row: row(t, uc, "1, 7"), Weight: 1}, {Row: row(t, uc, "2, 7"), Weight: 2}, {Row: row(t, uc, "2, 5"), Weight: 1}},
	}
	second := map[string]zset.Batch{
		"t": {{Row: row(t, tc, "1, 'x'"), Weight: -1}},
		"u": {{Row: row(t, uc, "2, 3"), Weight: 1}, {Row: row(t, uc, "2, 7"), Weight: -2}},
	}
	st := state.NewMemory()
	c1, err := Build(old, []byte("view/"), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Step(context.Background(), st, first); err != nil {
		t.Fatal(err)
	}
	c2, err := Build(next, []byte("view/"), false)
	if err != nil {
		t.Fatal(err)
	}
	was, now := c1.StateIdentities(sameName), c2.StateIdentities(sameName)
	if len(was) != 3 || len(now) != 3 {
		t.Fatalf("identities %d and %d, want 3 each (distinct, join, aggregate)", len(was), len(now))
	}
	r := c2.PlanReuse(func(id int) bool { w, ok := was[id]; return ok && now[id] == w })
	stateful := c2.StatefulOperators()
	if !slices.Equal(r.Kept, stateful[:2]) || !slices.Equal(r.Fresh, stateful[2:]) || !slices.Equal(r.Seeds, stateful[1:2]) {
		t.Fatalf("kept %v, fresh %v, seeds %v; stateful %v", r.Kept, r.Fresh, r.Seeds, stateful)
	}
	if rels := r.Relations(c2); len(rels) != 0 {
		t.Fatalf("the backfill reads %v, want nothing", rels)
	}
	// The aggregate's old state goes, as the runtime deletes it.
	agg := stateful[2]
	var dead [][]byte
	_ = st.Scan(nil, nil, func(k, _ []byte) bool {
		if len(k) >= len("view/")+5 && int(k[len("view/")+4]) == agg && k[len("view/")+1] == 0 && k[len("view/")+2] == 0 && k[len("view/")+3] == 0 {
			dead = append(dead, append([]byte(nil), k...))
		}
		return true
	})
	if len(dead) == 0 {
		t.Fatal("the old aggregate kept no state: the test exercises nothing")
	}
	for _, k := range dead {
		if err := st.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	out1, err := c2.StepReusing(context.Background(), st, nil, r)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := c2.Step(context.Background(), st, second)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got zset.Batch, in ...map[string]zset.Batch) {
		t.Helper()
		all := map[string]zset.Batch{}
		for _, m := range in {
			for rel, b := range m {
				all[rel] = mustConsolidate(t, append(all[rel], b...))
			}
		}
		want, err := batchEval(next, false, all)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := render(got, next.Columns()), render(want, next.Columns()); g != w || len(want) == 0 {
			t.Fatalf("%s:\n%s\nbatch:\n%s", what, g, w)
		}
	}
	check("backfill over kept state", out1, first)
	check("after a step", mustConsolidate(t, append(append(zset.Batch(nil), out1...), out2...)), first, second)
}

// TestStateIdentityNamesInputs: an operator's identity changes with the
// identity of what it scans, with its plan, and with nothing above it.
func TestStateIdentityNamesInputs(t *testing.T) {
	const below = `
    join on (a = a)
      scan t
      scan u
`
	a := reusePlan(t, "aggregate group=(b) aggs=(count(*))\n  filter a > 1\n"+below)
	b := reusePlan(t, "aggregate group=(b) aggs=(count(*))\n  filter a > 2\n"+below)
	ca, err := Build(a, []byte("v/"), false)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := Build(b, []byte("v/"), false)
	if err != nil {
		t.Fatal(err)
	}
	join := ca.StatefulOperators()[0]
	agg := ca.StatefulOperators()[1]
	ia, ib := ca.StateIdentities(sameName), cb.StateIdentities(sameName)
	if ia[join] != ib[join] {
		t.Error("the join's identity depends on a filter above it")
	}
	if ia[agg] == ib[agg] {
		t.Error("the aggregate's identity ignores the filter below it")
	}
	other := ca.StateIdentities(func(rel string) (string, bool) {
		if rel == "u" {
			return "u2", true
		}
		return rel, true
	})
	if other[join] == ia[join] || other[agg] == ia[agg] {
		t.Error("identities ignore the identity of a scanned relation")
	}
	if got := ca.StateIdentities(func(string) (string, bool) { return "", false }); len(got) != 0 {
		t.Errorf("identities %v over relations that cannot be named", got)
	}
}
