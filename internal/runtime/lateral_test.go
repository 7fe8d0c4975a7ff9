package runtime

import (
	"context"
	"strings"
	"testing"
)

// TestExplainLateral shows the plan of a LATERAL top-k per group: a join
// of the outer rows with a TopK partitioned by the correlation key, each
// input exchanged by the join key; no per-row evaluation is left.
func TestExplainLateral(t *testing.T) {
	ctx := context.Background()
	e, err := Open(NewMemoryStore(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession()
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE g (id int, name text)",
		"CREATE TABLE i (g int, v int)",
		"CREATE MATERIALIZED VIEW top AS SELECT g.name, t.v FROM g, LATERAL (SELECT i.v FROM i WHERE i.g = g.id ORDER BY i.v DESC LIMIT 2) t",
	} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := s.Exec(ctx, "EXPLAIN INCREMENTAL top", nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := formatRows(res)
	for _, want := range []string{"join inner  on=[g.id = i.g]", "topk", "partition=[i.g]"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN INCREMENTAL lacks %q:\n%s", want, plan)
		}
	}
}
