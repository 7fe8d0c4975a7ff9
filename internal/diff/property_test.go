package diff

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// TestIncrementalEqualsBatch is the engine's central promise as a property:
// for random small plans (filter, project, join, aggregate, distinct,
// union, intersect/except, TopK, window) and random batches of inserts
// and deletes, after every step the accumulated output of the incremental
// circuit equals one Step of a fresh circuit, on an empty store, over the
// accumulated inputs.
func TestIncrementalEqualsBatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, func(g *planGen) plan.Node { return g.node(t, rapid.IntRange(0, 3).Draw(t, "depth")) })
	})
}

// checkIncremental checks one plan that draw returns over the tables r
// and s against random input batches.
func checkIncremental(t *rapid.T, draw func(*planGen) plan.Node) {
	g := &planGen{tables: map[string][]plan.Column{
		"r": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "b", Type: types.Of(types.Int4)}, {Name: "c", Type: types.Of(types.Text)}},
		"s": {{Name: "a", Type: types.Of(types.Int4)}, {Name: "d", Type: types.Of(types.Int8)}, {Name: "n", Type: types.Of(types.Numeric)}},
	}}
	// An append-only relation only ever receives insertions, which lets
	// the operators over it keep less state (insertonly.go).
	g.appendOnly = map[string]bool{"r": rapid.Bool().Draw(t, "r append-only"), "s": rapid.Bool().Draw(t, "s append-only")}
	p := draw(g)
	t.Logf("plan:\n%s", describePlan(p, 0))
	c, err := Build(p, []byte("inc/"), false)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// The batch evaluation, the reference, takes every relation as one
	// that may retract: the operators' general form. The instances of the
	// other workers are built first, from the plan as drawn.
	if err := c.instances(maxTestWorkers); err != nil {
		t.Fatal(err)
	}
	forgetAppendOnly(p)
	st := state.NewMemory()
	inputs := map[string]zset.Batch{}
	var view zset.Batch
	steps := rapid.IntRange(1, 6).Draw(t, "steps")
	for step := 0; step < steps; step++ {
		deltas := map[string]zset.Batch{}
		for _, rel := range []string{"r", "s"} {
			deltas[rel] = g.delta(t, rel, inputs[rel])
		}
		// Run the step in an overlay; sometimes discard it and run it
		// again, which must give the same result (operators are pure).
		ov := state.NewOverlay(st)
		out, err := c.StepParallel(live, ov, deltas, workersOf(t))
		if errs.SQLState(err) == "21000" {
			// A scalar subquery's join found two rows for one left row:
			// the batch evaluation of the same inputs fails too, and the
			// step changes nothing.
			ov.Discard()
			next := map[string]zset.Batch{}
			for rel := range g.tables {
				next[rel] = mustConsolidate(t, append(append(zset.Batch(nil), inputs[rel]...), deltas[rel]...))
			}
			if _, err := batchEval(p, false, next); errs.SQLState(err) != "21000" {
				t.Fatalf("step %d failed with 21000, the batch evaluation with %v", step, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if rapid.Bool().Draw(t, "retry") {
			ov.Discard()
			again, err := c.StepParallel(live, ov, deltas, workersOf(t))
			if err != nil {
				t.Fatalf("step %d again: %v", step, err)
			}
			if render(again, p.Columns()) != render(out, p.Columns()) {
				t.Fatalf("step %d is not deterministic:\n%s\nvs\n%s", step, render(out, p.Columns()), render(again, p.Columns()))
			}
		}
		if err := ov.Commit(); err != nil {
			t.Fatal(err)
		}
		if !zset.IsConsolidated(out) {
			t.Fatalf("step %d: output not consolidated", step)
		}
		for rel, d := range deltas {
			inputs[rel] = mustConsolidate(t, append(inputs[rel], d...))
		}
		view = mustConsolidate(t, append(view, out...))
		for _, e := range view {
			if e.Weight < 0 {
				t.Fatalf("step %d: view holds %s ×%d", step, formatRow(e.Row, p.Columns()), e.Weight)
			}
		}
		batch, err := batchEval(p, false, inputs)
		if err != nil {
			t.Fatalf("batch evaluation: %v", err)
		}
		if renderExact(view) != renderExact(batch) {
			t.Fatalf("step %d: incremental differs from batch\nincremental:\n%s\nbatch:\n%s", step, render(view, p.Columns()), render(batch, p.Columns()))
		}
	}
}

// planGen draws well-typed random plans.
type planGen struct {
	tables     map[string][]plan.Column
	appendOnly map[string]bool
}

func (g *planGen) node(t *rapid.T, depth int) plan.Node {
	if depth == 0 {
		rel := rapid.SampledFrom([]string{"r", "s"}).Draw(t, "scan")
		return &plan.Scan{Relation: rel, Cols: g.tables[rel], AppendOnly: g.appendOnly[rel]}
	}
	switch rapid.IntRange(0, 7).Draw(t, "node") {
	case 0:
		return g.filter(t, g.node(t, depth-1))
	case 1:
		return g.project(t, g.node(t, depth-1))
	case 2, 3:
		return g.join(t, g.node(t, depth-1), g.node(t, rapid.IntRange(0, depth-1).Draw(t, "rdepth")))
	case 4:
		return g.aggregate(t, g.node(t, depth-1))
	case 5:
		return &plan.Distinct{Input: g.node(t, depth-1)}
	case 7:
		return g.orderedNode(t, depth)
	default:
		return g.union(t, g.node(t, depth-1), g.node(t, rapid.IntRange(0, depth-1).Draw(t, "rdepth")))
	}
}

func col(cols []plan.Column, i int) *plan.ColRef {
	return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}
}

// colsOf returns the indexes of the columns whose type is one of ids.
func colsOf(cols []plan.Column, ids ...types.TypeID) []int {
	var is []int
	for i, c := range cols {
		if slices.Contains(ids, c.Type.ID) {
			is = append(is, i)
		}
	}
	return is
}

func mustBinop(t *rapid.T, op string, l, r plan.Expr) plan.Expr {
	e, err := binop(op, l, r)
	if err != nil {
		t.Fatalf("%s %s %s: %v", l, op, r, err)
	}
	return e
}

func intConst(n int64) *plan.Const {
	return &plan.Const{Val: types.MakeInt(types.Int4, n), Typ: types.Of(types.Int4)}
}

// predicate draws a boolean expression over cols.
func (g *planGen) predicate(t *rapid.T, cols []plan.Column) plan.Expr {
	ints := colsOf(cols, types.Int4, types.Int8)
	if len(ints) == 0 || rapid.IntRange(0, 4).Draw(t, "isnull") == 0 {
		return &plan.IsNull{Arg: col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "col")), Negated: rapid.Bool().Draw(t, "neg")}
	}
	l := col(cols, rapid.SampledFrom(ints).Draw(t, "col"))
	op := rapid.SampledFrom([]string{"=", "<>", "<", ">", "<="}).Draw(t, "op")
	var r plan.Expr = intConst(int64(rapid.IntRange(-1, 3).Draw(t, "const")))
	if len(ints) > 1 && rapid.Bool().Draw(t, "colcol") {
		r = col(cols, rapid.SampledFrom(ints).Draw(t, "col2"))
	}
	return mustBinop(t, op, l, r)
}

func (g *planGen) filter(t *rapid.T, in plan.Node) plan.Node {
	return &plan.Filter{Input: in, Pred: g.predicate(t, in.Columns())}
}

func (g *planGen) project(t *rapid.T, in plan.Node) plan.Node {
	cols := in.Columns()
	p := &plan.Project{Input: in}
	n := rapid.IntRange(1, 3).Draw(t, "width")
	for i := 0; i < n; i++ {
		c := rapid.IntRange(0, len(cols)-1).Draw(t, "pcol")
		var e plan.Expr = col(cols, c)
		if id := cols[c].Type.ID; (id == types.Int4 || id == types.Int8) && rapid.Bool().Draw(t, "arith") {
			e = mustBinop(t, rapid.SampledFrom([]string{"+", "-", "*"}).Draw(t, "aop"), e, intConst(int64(rapid.IntRange(-1, 2).Draw(t, "k"))))
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, plan.Column{Name: fmt.Sprintf("p%d", i), Type: e.Type()})
	}
	return p
}

func (g *planGen) join(t *rapid.T, l, r plan.Node) plan.Node {
	lc, rc := l.Columns(), r.Columns()
	j := &plan.Join{Kind: plan.InnerJoin, Left: l, Right: r}
	j.Cols = append(append([]plan.Column(nil), lc...), rc...)
	nkeys := rapid.IntRange(0, 2).Draw(t, "nkeys")
	for k := 0; k < nkeys; k++ {
		li := rapid.IntRange(0, len(lc)-1).Draw(t, "lkey")
		same := colsOf(rc, lc[li].Type.ID)
		if len(same) == 0 {
			continue
		}
		ri := rapid.SampledFrom(same).Draw(t, "rkey")
		j.LeftKeys = append(j.LeftKeys, col(lc, li))
		j.RightKeys = append(j.RightKeys, col(rc, ri))
		j.NullSafe = append(j.NullSafe, rapid.IntRange(0, 3).Draw(t, "nullsafe") == 0)
	}
	if rapid.IntRange(0, 2).Draw(t, "residual") == 0 {
		j.Residual = g.predicate(t, j.Cols)
	}
	g.joinKind(t, j)
	return j
}

// joinKind makes j, drawn as an inner join, one of the other kinds: outer
// joins, and semi-, anti- and mark joins with or without an ANY test.
func (g *planGen) joinKind(t *rapid.T, j *plan.Join) {
	kinds := []plan.JoinKind{plan.InnerJoin, plan.LeftJoin, plan.RightJoin, plan.FullJoin, plan.SemiJoin, plan.AntiJoin, plan.MarkJoin}
	j.Kind = rapid.SampledFrom(kinds).Draw(t, "kind")
	lc := j.Left.Columns()
	switch j.Kind {
	case plan.SemiJoin, plan.AntiJoin, plan.MarkJoin:
		if rapid.Bool().Draw(t, "test") {
			j.Test = g.test(t, j.Cols, len(lc))
		}
		j.Cols = append([]plan.Column(nil), lc...)
		if j.Kind == plan.MarkJoin {
			j.Cols = append(j.Cols, plan.Column{Name: "mark", Type: types.Of(types.Bool)})
		}
	case plan.LeftJoin:
		j.SingleMatch = rapid.IntRange(0, 3).Draw(t, "single") == 0
	}
}

// test draws the comparison of x op ANY (subquery) over a join's
// concatenated row: x from the left input, y from the right one (often
// "=", the keyed IN), or any predicate.
func (g *planGen) test(t *rapid.T, cols []plan.Column, lw int) plan.Expr {
	var pairs [][2]int
	for l := 0; l < lw; l++ {
		for r := lw; r < len(cols); r++ {
			if cols[l].Type.ID == cols[r].Type.ID && cols[l].Type.ID != types.Bool {
				pairs = append(pairs, [2]int{l, r})
			}
		}
	}
	if len(pairs) == 0 || rapid.IntRange(0, 3).Draw(t, "anytest") == 0 {
		return g.predicate(t, cols)
	}
	p := rapid.SampledFrom(pairs).Draw(t, "testcols")
	op := "="
	if cols[p[0]].Type.ID != types.Text && rapid.IntRange(0, 2).Draw(t, "testop") == 0 {
		op = rapid.SampledFrom([]string{"<", "<>", ">="}).Draw(t, "op")
	}
	return mustBinop(t, op, col(cols, p[0]), col(cols, p[1]))
}

func (g *planGen) aggregate(t *rapid.T, in plan.Node) plan.Node {
	cols := in.Columns()
	a := &plan.Aggregate{Input: in}
	for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(cols)-1), 0, 2, rapid.ID[int]).Draw(t, "group") {
		a.GroupBy = append(a.GroupBy, col(cols, i))
		a.Cols = append(a.Cols, plan.Column{Name: cols[i].Name, Type: cols[i].Type})
	}
	nums := colsOf(cols, types.Int4, types.Int8, types.Numeric)
	n := rapid.IntRange(0, 3).Draw(t, "naggs")
	if len(a.GroupBy) == 0 && n == 0 {
		n = 1
	}
	for i := 0; i < n; i++ {
		c := plan.AggCall{Func: rapid.SampledFrom([]string{"count", "sum", "avg", "min", "max", "bool_and", "bool_or",
			"string_agg", "var_samp", "var_pop", "stddev_samp", "stddev_pop"}).Draw(t, "fn")}
		switch {
		case c.Func == "string_agg":
			g.stringAgg(t, &c, cols)
		case c.Func == "count" && rapid.Bool().Draw(t, "star"):
		case c.Func == "bool_and" || c.Func == "bool_or":
			c.Arg = g.predicate(t, cols)
		case c.Func == "count":
			c.Arg = col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "arg"))
		case c.Func == "min" || c.Func == "max":
			if ordered := colsOf(cols, types.Int4, types.Int8, types.Numeric, types.Text); len(ordered) > 0 {
				c.Arg = col(cols, rapid.SampledFrom(ordered).Draw(t, "arg"))
			} else {
				c.Func = "count"
			}
		case len(nums) > 0:
			c.Arg = col(cols, rapid.SampledFrom(nums).Draw(t, "arg"))
		default:
			c.Func = "count"
		}
		if c.Arg != nil && c.Func != "min" && c.Func != "max" {
			c.Distinct = rapid.IntRange(0, 3).Draw(t, "distinct") == 0
		}
		if rapid.IntRange(0, 3).Draw(t, "filter") == 0 {
			c.Filter = g.predicate(t, cols)
		}
		c.Type = types.Of(types.Int8)
		if c.Func == "string_agg" {
			c.Type = types.Of(types.Text)
		} else if c.Arg != nil {
			var err error
			if c.Type, err = types.AggregateType(c.Func, c.Arg.Type()); err != nil {
				t.Fatalf("%s(%s): %v", c.Func, c.Arg.Type(), err)
			}
		}
		a.Aggs = append(a.Aggs, c)
		a.Cols = append(a.Cols, plan.Column{Name: c.Func, Type: c.Type})
	}
	return a
}

// stringAgg makes c a string_agg over a text column, with a constant or
// per-row delimiter and up to two ORDER BY keys; count when there is no
// text column.
func (g *planGen) stringAgg(t *rapid.T, c *plan.AggCall, cols []plan.Column) {
	texts := colsOf(cols, types.Text)
	if len(texts) == 0 {
		c.Func = "count"
		return
	}
	c.Arg = col(cols, rapid.SampledFrom(texts).Draw(t, "arg"))
	var delim plan.Expr = &plan.Const{Val: types.MakeText(","), Typ: types.Of(types.Text)}
	if rapid.Bool().Draw(t, "rowdelim") {
		delim = col(cols, rapid.SampledFrom(texts).Draw(t, "delim"))
	}
	c.More = []plan.Expr{delim}
	for range rapid.IntRange(0, 2).Draw(t, "norder") {
		c.Order = append(c.Order, plan.SortKey{Expr: col(cols, rapid.IntRange(0, len(cols)-1).Draw(t, "okey")),
			Desc: rapid.Bool().Draw(t, "desc"), NullsFirst: rapid.Bool().Draw(t, "nullsfirst")})
	}
}

// union projects both inputs onto columns of types they share.
func (g *planGen) union(t *rapid.T, l, r plan.Node) plan.Node {
	lc, rc := l.Columns(), r.Columns()
	var lp, rp plan.Project
	for i, c := range lc {
		same := colsOf(rc, c.Type.ID)
		if len(same) == 0 || (len(lp.Exprs) > 0 && rapid.Bool().Draw(t, "skip")) {
			continue
		}
		j := rapid.SampledFrom(same).Draw(t, "ucol")
		lp.Exprs = append(lp.Exprs, col(lc, i))
		rp.Exprs = append(rp.Exprs, col(rc, j))
		lp.Cols = append(lp.Cols, c)
		rp.Cols = append(rp.Cols, c)
	}
	if len(lp.Exprs) == 0 {
		return &plan.Union{Ins: []plan.Node{l, l}, Cols: lc}
	}
	lp.Input, rp.Input = l, r
	return &plan.Union{Ins: []plan.Node{&lp, &rp}, Cols: lp.Cols}
}

// delta draws one step's changes to rel: inserts of random rows from a
// small domain (so that keys collide) and deletes of rows present.
func (g *planGen) delta(t *rapid.T, rel string, current zset.Batch) zset.Batch {
	var d zset.Batch
	for i, n := 0, rapid.IntRange(0, 4).Draw(t, "inserts"); i < n; i++ {
		var row zset.Row
		for _, c := range g.tables[rel] {
			row = append(row, g.value(t, c.Type))
		}
		d = append(d, zset.Entry{Row: row, Weight: int64(rapid.IntRange(1, 2).Draw(t, "w"))})
	}
	for _, e := range current {
		if g.appendOnly[rel] {
			break
		}
		if rapid.IntRange(0, 3).Draw(t, "delete") == 0 {
			d = append(d, zset.Entry{Row: e.Row, Weight: -int64(rapid.IntRange(1, int(e.Weight)).Draw(t, "dw"))})
		}
	}
	return d
}

func (g *planGen) value(t *rapid.T, typ types.Type) types.Value {
	if rapid.IntRange(0, 5).Draw(t, "null") == 0 {
		return types.Null
	}
	switch typ.ID {
	case types.Numeric:
		// 1.5 and 1.50 are equal under = but different rows of a Z-set:
		// keyed operators must show one representative, the same one
		// however the rows arrived.
		v, err := types.Parse(typ, rapid.SampledFrom([]string{"1.5", "1.50", "2.25", "-0.5", "10", "10.0"}).Draw(t, "numeric"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	case types.Text:
		return types.MakeText(rapid.SampledFrom([]string{"x", "y"}).Draw(t, "text"))
	default:
		return types.MakeInt(typ.ID, int64(rapid.IntRange(-1, 2).Draw(t, "int")))
	}
}

func describePlan(p plan.Node, depth int) string {
	var sb strings.Builder
	sb.WriteString(strings.Repeat("  ", depth))
	switch n := p.(type) {
	case *plan.Scan:
		sb.WriteString("scan " + n.Relation)
	case *plan.Filter:
		sb.WriteString("filter " + n.Pred.String())
	case *plan.Project:
		sb.WriteString("project " + exprList(n.Exprs))
	case *plan.Join:
		sb.WriteString("join " + joinKindNames[n.Kind] + " " + exprList(n.LeftKeys) + " = " + exprList(n.RightKeys) + fmt.Sprintf(" nullsafe=%v", n.NullSafe))
		if n.Residual != nil {
			sb.WriteString(" where " + n.Residual.String())
		}
		if n.Test != nil {
			sb.WriteString(" test " + n.Test.String())
		}
		if n.SingleMatch {
			sb.WriteString(" single")
		}
	case *plan.Aggregate:
		var calls []string
		for _, c := range n.Aggs {
			calls = append(calls, aggString(c))
		}
		sb.WriteString("aggregate " + exprList(n.GroupBy) + " " + strings.Join(calls, ", "))
	case *plan.Distinct:
		sb.WriteString("distinct")
	case *plan.Union:
		sb.WriteString("union")
	default:
		sb.WriteString(describeOrdered(p))
	}
	sb.WriteByte('\n')
	for _, in := range p.Inputs() {
		sb.WriteString(describePlan(in, depth+1))
	}
	return sb.String()
}

// renderExact renders a batch exactly: rows equal under = but written
// differently (NUMERIC 1.5 and 1.50) are different rows.
func renderExact(b zset.Batch) string {
	var sb strings.Builder
	for _, e := range b {
		fmt.Fprintf(&sb, "%x ×%d\n", zset.EncodeRow(nil, e.Row), e.Weight)
	}
	return sb.String()
}

// forgetAppendOnly clears the AppendOnly mark of p's scans.
func forgetAppendOnly(p plan.Node) {
	if s, ok := p.(*plan.Scan); ok {
		s.AppendOnly = false
	}
	for _, in := range p.Inputs() {
		forgetAppendOnly(in)
	}
}
