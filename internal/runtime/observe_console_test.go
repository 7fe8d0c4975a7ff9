package runtime

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
)

// TestCatalogLineage checks Engine.Catalog: every relation with its kind
// and columns, what each view reads and what reads it, and the row count
// and last change of the materialized views, which follow the writes.
func TestCatalogLineage(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	s := eng.NewSession()
	defer s.Close()
	run(s, "CREATE TABLE t (k int PRIMARY KEY, g int)")
	run(s, "CREATE TABLE u (g int, name text)")
	run(s, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g")
	run(s, "CREATE VIEW named AS SELECT p.g, p.n, u.name FROM per_g p JOIN u ON p.g = u.g")
	run(s, "CREATE MATERIALIZED VIEW big AS SELECT * FROM named WHERE n > 1")

	byName := func(info CatalogInfo) map[string]RelationInfo {
		m := map[string]RelationInfo{}
		for _, r := range info.Relations {
			m[r.Name] = r
		}
		return m
	}
	info, err := eng.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	rels := byName(info)
	var names []string
	for _, r := range info.Relations {
		names = append(names, r.Name+":"+r.Kind)
	}
	if got := strings.Join(names, ","); got != "big:materialized view,named:view,per_g:materialized view,t:table,u:table" {
		t.Fatalf("relations: %s", got)
	}
	for _, c := range []struct {
		name          string
		reads, readBy []string
	}{
		{"t", nil, []string{"per_g"}},
		{"u", nil, []string{"named"}},
		{"per_g", []string{"t"}, []string{"named"}},
		{"named", []string{"per_g", "u"}, []string{"big"}},
		{"big", []string{"named"}, nil},
	} {
		r := rels[c.name]
		if !slices.Equal(r.Reads, c.reads) || !slices.Equal(r.ReadBy, c.readBy) {
			t.Errorf("%s reads %v, read by %v; want %v, %v", c.name, r.Reads, r.ReadBy, c.reads, c.readBy)
		}
	}
	if cols := fmt.Sprint(rels["per_g"].Columns); cols != "[{g integer} {n bigint}]" {
		t.Errorf("per_g columns: %s", cols)
	}
	if d := rels["per_g"].Definition; !strings.Contains(d, "count(*)") {
		t.Errorf("per_g definition: %q", d)
	}
	if r := rels["per_g"]; r.Rows != 0 || r.Created == 0 {
		t.Errorf("per_g before writes: rows %d, created %d", r.Rows, r.Created)
	}
	if rels["t"].Rows != -1 {
		t.Errorf("a table's rows: %d, want -1", rels["t"].Rows)
	}

	run(s, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)")
	run(s, "INSERT INTO u VALUES (1, 'one'), (2, 'two')")
	info, err = eng.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	rels = byName(info)
	if info.Epoch != eng.Epoch() {
		t.Errorf("catalog at epoch %d, engine at %d", info.Epoch, eng.Epoch())
	}
	if r := rels["per_g"]; r.Rows != 2 || r.LastChange == 0 {
		t.Errorf("per_g: rows %d, last change %d", r.Rows, r.LastChange)
	}
	if r := rels["big"]; r.Rows != 1 || r.LastChange != info.Epoch {
		t.Errorf("big: rows %d, last change %d (epoch %d)", r.Rows, r.LastChange, info.Epoch)
	}
}

// TestViewCircuitState checks Engine.ViewCircuit: the circuit's operators
// as EXPLAIN INCREMENTAL lists them, the state each keeps growing with
// the groups and going when they go, and the rows they emitted.
func TestViewCircuitState(t *testing.T) {
	eng := OpenMemory()
	defer eng.Close()
	run := sqlRunner(t)
	s := eng.NewSession()
	defer s.Close()
	run(s, "CREATE TABLE t (k int PRIMARY KEY, g int)")
	run(s, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, min(k) FROM t GROUP BY g")

	for name, code := range map[string]string{"nope": "42P01", "t": "42809"} {
		if _, err := eng.ViewCircuit(name); errs.SQLState(err) != code {
			t.Errorf("ViewCircuit(%q): %v, want %s", name, err, code)
		}
	}

	circuit := func() (CircuitInfo, OperatorInfo, OperatorInfo) {
		t.Helper()
		c, err := eng.ViewCircuit("per_g")
		if err != nil {
			t.Fatal(err)
		}
		var scan, agg OperatorInfo
		var sum StateSize
		for _, op := range c.Operators {
			switch op.Kind {
			case "scan":
				scan = op
			case "aggregate":
				agg = op
			}
			if !strings.Contains(c.Explain, op.Explain) {
				t.Errorf("operator %d %q is not in EXPLAIN:\n%s", op.ID, op.Explain, c.Explain)
			}
			sum.Keys += op.State.Keys
			sum.Bytes += op.State.Bytes
		}
		if sum != c.State || !c.Complete {
			t.Errorf("operators hold %+v, the circuit %+v (complete %v)", sum, c.State, c.Complete)
		}
		if scan.Relation != "t" || agg.Kind != "aggregate" {
			t.Fatalf("no scan of t or no aggregate in %+v", c.Operators)
		}
		return c, scan, agg
	}
	c, scan, agg := circuit()
	if c.State.Keys != 0 || scan.Rows != 0 {
		t.Fatalf("empty view: state %+v, scan rows %d", c.State, scan.Rows)
	}
	var values []string
	for k := 1; k <= 50; k++ {
		values = append(values, fmt.Sprintf("(%d, %d)", k, k%5))
	}
	run(s, "INSERT INTO t VALUES "+strings.Join(values, ", "))
	c, scan, agg = circuit()
	if scan.Rows != 50 || c.Rows != 5 || c.LastChange != eng.Epoch() {
		t.Errorf("after 50 rows: scan emitted %d, view rows %d, last change %d (epoch %d)", scan.Rows, c.Rows, c.LastChange, eng.Epoch())
	}
	// min(k) keeps every value of every group; count(*) one entry per
	// group.
	five := agg.State
	if five.Keys < 50 || five.Bytes <= five.Keys {
		t.Errorf("aggregate state over 50 rows in 5 groups: %+v", five)
	}
	run(s, "DELETE FROM t WHERE g >= 3")
	_, scan, agg = circuit()
	if agg.State.Keys >= five.Keys || agg.State.Keys == 0 || scan.Rows != 70 {
		t.Errorf("after deleting 2 groups: aggregate state %+v (was %+v), scan emitted %d", agg.State, five, scan.Rows)
	}
	run(s, "DELETE FROM t")
	if c, _, agg = circuit(); c.State.Keys != 0 || agg.State.Keys != 0 {
		t.Errorf("empty table: state %+v", c.State)
	}

	// A bounded count stops at its limit and says so.
	run(s, "INSERT INTO t VALUES "+strings.Join(values, ", "))
	eng.mu.RLock()
	o := eng.mu.cat.byName["per_g"]
	_, part, complete, err := operatorState(currentReader{eng.mu.store, eng}, o.id, o.circuit.OperatorCount(), 10)
	eng.mu.RUnlock()
	if err != nil || complete || part.Keys != 10 {
		t.Errorf("state counted up to 10 keys: %+v, complete %v, %v", part, complete, err)
	}

	states, err := eng.ViewStates()
	if err != nil || len(states) != 1 || states[0].Name != "per_g" || states[0].RowsProcessed == 0 {
		t.Fatalf("ViewStates: %+v, %v", states, err)
	}
	if since := time.Since(eng.LastCommit()); since < 0 || since > time.Minute {
		t.Errorf("last commit %v ago", since)
	}
}

// TestCommitTimes checks the ring of commit times: every epoch of the
// last commitTimesKept found, older and unknown ones not.
func TestCommitTimes(t *testing.T) {
	var c commitTimes
	base := time.Unix(1_000_000, 0)
	if _, ok := c.at(1); ok {
		t.Fatal("an empty ring knows epoch 1")
	}
	last := uint64(commitTimesKept + 500)
	for e := uint64(1); e <= last; e += 1 {
		if e == 700 {
			continue // an epoch that committed nothing takes no time
		}
		c.add(e, base.Add(time.Duration(e)*time.Second))
	}
	for _, e := range []uint64{last, last - 1, 701, 699, 600} {
		if got, ok := c.at(e); !ok || !got.Equal(base.Add(time.Duration(e)*time.Second)) {
			t.Errorf("epoch %d: %v %v", e, got, ok)
		}
	}
	for _, e := range []uint64{1, 400, 700, last + 1} {
		if got, ok := c.at(e); ok {
			t.Errorf("epoch %d found at %v", e, got)
		}
	}
}
