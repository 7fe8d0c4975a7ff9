package diff

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestJoinsMatchNestedLoop checks every join kind against a reference
// model: a nested loop over the accumulated inputs that follows the SQL
// definitions (plan.Join) directly. After every random step, the
// incrementally maintained join equals the nested loop over its inputs'
// batch evaluations.
func TestJoinsMatchNestedLoop(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := &planGen{tables: map[string][]plan.Column{
			"r": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Text)}},
			"s": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "d", Type: types.Of(types.Int8)}, {Name: "n", Type: types.Of(types.Numeric)}},
		}}
		l := g.node(t, rapid.IntRange(0, 1).Draw(t, "ldepth"))
		r := g.node(t, rapid.IntRange(0, 1).Draw(t, "rdepth"))
		j := g.join(t, l, r).(*plan.Join)
		t.Logf("plan:\n%s", describePlan(j, 0))
		c, err := Build(j, []byte("inc/"), false)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		st := state.NewMemory()
		inputs := map[string]zset.Batch{}
		var view zset.Batch
		for step, steps := 0, rapid.IntRange(1, 8).Draw(t, "steps"); step < steps; step++ {
			deltas := map[string]zset.Batch{}
			next := map[string]zset.Batch{}
			for _, rel := range []string{"r", "s"} {
				deltas[rel] = g.delta(t, rel, inputs[rel])
				next[rel] = mustConsolidate(t, append(append(zset.Batch(nil), inputs[rel]...), deltas[rel]...))
			}
			// An input may itself fail (a nested scalar subquery's
			// join); then the whole join must fail the same way.
			lb, wantErr := batchEval(l, false, next)
			var rb, want zset.Batch
			if wantErr == nil {
				rb, wantErr = batchEval(r, false, next)
			}
			if wantErr == nil {
				want, wantErr = nestedLoop(j, lb, rb)
			}
			ov := state.NewOverlay(st)
			out, err := c.StepParallel(live, ov, deltas, workersOf(t))
			if wantErr != nil || err != nil {
				if errs.SQLState(err) != errs.SQLState(wantErr) {
					t.Fatalf("step %d: got error %v, want %v", step, err, wantErr)
				}
				ov.Discard()
				continue
			}
			if err := ov.Commit(); err != nil {
				t.Fatal(err)
			}
			inputs = next
			view = mustConsolidate(t, append(view, out...))
			if renderExact(view) != renderExact(want) {
				t.Fatalf("step %d: join differs from the nested loop\nincremental:\n%s\nnested loop:\n%s",
					step, render(view, j.Columns()), render(want, j.Columns()))
			}
		}
	})
}

// nestedLoop evaluates j over its inputs' contents by definition.
func nestedLoop(j *plan.Join, l, r zset.Batch) (zset.Batch, error) {
	lw, rw := len(j.Left.Columns()), len(j.Right.Columns())
	concat := func(a, b zset.Row) zset.Row {
		row := make(zset.Row, lw+rw)
		copy(row, a)
		copy(row[lw:], b)
		return row
	}
	nullsL, nullsR := make(zset.Row, lw), make(zset.Row, rw)
	matches := func(a, b zset.Row) (bool, error) {
		for i := range j.LeftKeys {
			x, err := j.LeftKeys[i].Eval(a)
			if err != nil {
				return false, err
			}
			y, err := j.RightKeys[i].Eval(b)
			if err != nil {
				return false, err
			}
			switch {
			case x.IsNull() || y.IsNull():
				if !(i < len(j.NullSafe) && j.NullSafe[i] && x.IsNull() && y.IsNull()) {
					return false, nil
				}
			case types.Compare(x, y) != 0:
				return false, nil
			}
		}
		if j.Residual == nil {
			return true, nil
		}
		v, err := j.Residual.Eval(concat(a, b))
		return err == nil && !v.IsNull() && v.Bool(), err
	}
	var out zset.Batch
	rMatched := make([]bool, len(r))
	for _, le := range l {
		var matched int64
		var anyTrue, anyNull bool
		for ri, re := range r {
			ok, err := matches(le.Row, re.Row)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			matched += re.Weight
			rMatched[ri] = true
			switch j.Kind {
			case plan.InnerJoin, plan.LeftJoin, plan.RightJoin, plan.FullJoin:
				out = append(out, zset.Entry{Row: concat(le.Row, re.Row), Weight: le.Weight * re.Weight})
			}
			if j.Test == nil {
				anyTrue = true
				continue
			}
			v, err := j.Test.Eval(concat(le.Row, re.Row))
			if err != nil {
				return nil, err
			}
			anyTrue = anyTrue || (!v.IsNull() && v.Bool())
			anyNull = anyNull || v.IsNull()
		}
		if j.SingleMatch && matched > 1 {
			return nil, errs.New(errs.CardinalityViolation, "more than one row returned by a subquery used as an expression")
		}
		m := types.MakeBool(false)
		switch {
		case anyTrue:
			m = types.MakeBool(true)
		case anyNull:
			m = types.Null
		}
		switch j.Kind {
		case plan.LeftJoin, plan.FullJoin:
			if matched == 0 {
				out = append(out, zset.Entry{Row: concat(le.Row, nullsR), Weight: le.Weight})
			}
		case plan.SemiJoin:
			if anyTrue {
				out = append(out, le)
			}
		case plan.AntiJoin:
			if !anyTrue && !anyNull {
				out = append(out, le)
			}
		case plan.MarkJoin:
			out = append(out, zset.Entry{Row: append(append(zset.Row(nil), le.Row...), m), Weight: le.Weight})
		}
	}
	if j.Kind == plan.RightJoin || j.Kind == plan.FullJoin {
		for ri, re := range r {
			if !rMatched[ri] {
				out = append(out, zset.Entry{Row: concat(nullsL, re.Row), Weight: re.Weight})
			}
		}
	}
	return zset.Consolidate(out)
}
