package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// genRow draws a row (int4 or NULL, int4 or NULL, text).
func genRow(t *rapid.T) zset.Row {
	val := func(label string) types.Value {
		if rapid.IntRange(0, 5).Draw(t, label+"null") == 0 {
			return types.Null
		}
		return i4(int64(rapid.IntRange(-2, 3).Draw(t, label)))
	}
	return zset.Row{val("k"), val("v"), types.MakeText(rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "s"))}
}

// genBatch draws a delta over the multiset held (inserts, and deletions
// of rows it holds) and applies it to held.
func genBatch(t *rapid.T, held *zset.Batch) zset.Batch {
	var b zset.Batch
	for range rapid.IntRange(0, 6).Draw(t, "n") {
		if len(*held) > 0 && rapid.Bool().Draw(t, "delete") {
			i := rapid.IntRange(0, len(*held)-1).Draw(t, "victim")
			b = append(b, zset.Entry{Row: (*held)[i].Row, Weight: -1})
			*held = append((*held)[:i], (*held)[i+1:]...)
			continue
		}
		r := genRow(t)
		b = append(b, zset.Entry{Row: r, Weight: 1})
		*held = append(*held, zset.Entry{Row: r, Weight: 1})
	}
	return b
}

// checkContents steps op over random deltas and checks after each step
// that Contents is the sum of every output so far.
func checkContents(t *rapid.T, op Operator, inputs int) {
	ctx := context.Background()
	st := state.NewMemory()
	held := make([]zset.Batch, inputs)
	var sum zset.Batch
	for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
		in := make([]zset.Batch, inputs)
		for i := range in {
			in[i] = genBatch(t, &held[i])
		}
		out, err := op.Step(ctx, st, in)
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, out...)
		want, err := zset.Consolidate(append(zset.Batch(nil), sum...))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Contents(ctx, st, op)
		if err != nil {
			t.Fatal(err)
		}
		if entryText(got) != entryText(want) {
			t.Fatalf("step %d: contents %v, want %v", step, got, want)
		}
	}
}

// TestAggregateContents: an aggregate's contents, read from its groups'
// state, are what it has emitted, for arranged (min, max) and algebraic
// aggregates, with and without GROUP BY.
func TestAggregateContents(t *testing.T) {
	aggs := []plan.AggCall{
		{Func: "count", Type: types.Of(types.Int8)},
		{Func: "sum", Arg: ref(1, types.Int4), Type: types.Of(types.Int8)},
		{Func: "min", Arg: ref(1, types.Int4), Type: types.Of(types.Int4)},
		{Func: "max", Arg: ref(2, types.Text), Type: types.Of(types.Text)},
		{Func: "count", Arg: ref(1, types.Int4), Distinct: true, Type: types.Of(types.Int8)},
	}
	rapid.Check(t, func(t *rapid.T) {
		var groupBy []plan.Expr
		if rapid.Bool().Draw(t, "grouped") {
			groupBy = []plan.Expr{ref(0, types.Int4)}
		}
		a, err := NewAggregate(Prefix{Circuit: []byte("p"), Op: []byte{0, 0, 0, 1}}, groupBy, aggs)
		if err != nil {
			t.Fatal(err)
		}
		checkContents(t, a, 1)
	})
}

// TestJoinContents: an inner join's contents are the join of its
// arrangements, with and without a residual predicate, and for a cross
// join.
func TestJoinContents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var lk, rk []plan.Expr
		if rapid.Bool().Draw(t, "keyed") {
			lk, rk = []plan.Expr{ref(0, types.Int4)}, []plan.Expr{ref(0, types.Int4)}
		}
		var residual plan.Expr
		if rapid.Bool().Draw(t, "residual") {
			residual = &plan.IsNull{Arg: ref(4, types.Int4), Negated: true}
		}
		j := NewJoin(Prefix{Circuit: []byte("p"), Op: []byte{0, 0, 0, 2}}, lk, rk, nil, residual, 3, 3)
		checkContents(t, j, 2)
	})
}

// entryText renders a batch as sorted exact rows with their weights.
func entryText(b zset.Batch) string {
	var es []string
	for _, e := range b {
		es = append(es, fmt.Sprintf("%x:%d", zset.EncodeRow(nil, e.Row), e.Weight))
	}
	slices.Sort(es)
	return strings.Join(es, " ")
}
