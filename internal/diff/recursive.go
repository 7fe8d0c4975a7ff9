package diff

import (
	"context"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/ops"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A recursive query r = base ∪ step(r) becomes one Fixpoint operator
// (ops/fixpoint.go) whose inputs are the non-recursive term and the side
// inputs of the recursive term, built as ordinary parts of the circuit,
// and which runs the recursive term's spine as a nested circuit (its
// body) until nothing changes.
//
// The spine is the path from the working table to the recursive term's
// output. Every subtree hanging off it does not read the working table: it
// is a side input, replaced in the body by a scan of a pseudo relation
// whose delta the Fixpoint takes from its own input. The spine may hold
// only filters, projections and joins whose output is linear in the
// working table (checkJoin), and in UNION recursion DISTINCT, which changes
// nothing there: both maintenance strategies need the body linear in the
// working table, and delete-and-rederive also needs it monotone in the side
// inputs. Anything else over the working table fails with 0A000.
//
// For UNION ALL the body's rows carry one more column, the iteration that
// derived them, which the body passes through unchanged (tagSpine).
//
// On several workers the Fixpoint runs on every one (exchange.go): the
// body is built with its exchanges, like any circuit, and each worker's
// body steps over its share of every iteration's rows.

// iterationColumn is the column UNION ALL bodies carry.
var iterationColumn = plan.Column{Name: "?iteration?", Type: types.Of(types.Int8)}

func (b *builder) recursive(n *plan.Recursive) (int, error) {
	refs := countWorkingTables(n.Step, n.ID)
	if refs != 1 {
		return 0, errs.Newf(errs.FeatureNotSupported,
			"recursive query %q must read its recursive reference exactly once in its recursive term (it does %d times)", n.Name, refs)
	}
	cut := &spineCut{rec: n, working: "working table " + n.Name}
	spine, err := cut.cut(n.Step)
	if err != nil {
		return 0, err
	}
	base, err := b.build(n.Base)
	if err != nil {
		return 0, err
	}
	ins := []int{base}
	labels := []string{"non-recursive term:"}
	for i, s := range cut.sides {
		in, err := b.build(s)
		if err != nil {
			return 0, err
		}
		ins = append(ins, in)
		labels = append(labels, cut.names[i]+" (read by the recursive term):")
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return 0, err
	}
	if !n.Distinct {
		spine = cut.tag(spine)
	}
	// The body is built like any circuit, with its exchanges: on several
	// workers every worker runs it over its rows (recursiveBody).
	body, err := build(spine, ops.BodyPrefix(prefix), false, b.serial)
	if err != nil {
		return 0, err
	}
	limit := n.MaxIterations
	if limit <= 0 {
		limit = ops.DefaultMaxIterations
	}
	op := ops.NewFixpoint(prefix, ops.FixpointSpec{
		Name: n.Name, Body: &recursiveBody{c: body, scope: len(b.nodes) + 1}, Working: cut.working, Sides: cut.names, MaxIterations: limit,
	}, n.Distinct)

	var sb strings.Builder
	if n.Distinct {
		fmt.Fprintf(&sb, "recursive %s  UNION  max-iterations=%d  deletes=delete-and-rederive  state=counts(row→base count, derivation count, in result)\n", n.Name, limit)
		sb.WriteString("  body, run per iteration on the rows that entered (or left) the result:\n")
	} else {
		fmt.Fprintf(&sb, "recursive %s  UNION ALL  max-iterations=%d  deletes=per-iteration deltas  state=body arrangements keyed by iteration\n", n.Name, limit)
		sb.WriteString("  body, run per iteration on the previous iteration's delta:\n")
	}
	for _, line := range strings.Split(strings.TrimRight(body.Explain(), "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	id := b.add(node{op: op, inputs: ins, labels: labels, explain: strings.TrimRight(sb.String(), "\n")})
	// Every input is routed by the whole row, so that each worker's part
	// of a delta is its share of the consolidated whole: the fixpoint's
	// rows belong to the owners of their buckets, and the workers agree
	// on every iteration (ops.ParallelOperator).
	b.keyedBy(id)
	return id, nil
}

// recursiveBody is a recursive query's body: its circuit, stepped alone
// (ops.Serial) or as one worker's part of a parallel step, its exchanges
// under the hub's scope scope (its fixpoint's node index + 1).
type recursiveBody struct {
	c     *Circuit
	scope int
}

func (r *recursiveBody) Step(ctx context.Context, st state.Store, deltas map[string]zset.Batch, x ops.Exchange) (zset.Batch, error) {
	w, ok := x.(*workerExchange)
	if !ok {
		return r.c.Step(ctx, st, deltas)
	}
	in := make(map[string]zset.Batch, len(r.c.relations))
	for _, rel := range r.c.relations {
		d, err := r.c.inputOf(rel, deltas[rel])
		if err != nil {
			return nil, err
		}
		in[rel] = d
	}
	return r.c.stepWorker(ctx, st, in, w.m, w.me, r.scope)
}

// countWorkingTables counts the WorkingTable nodes of recursive query id
// in p.
func countWorkingTables(p plan.Node, id int) int {
	if w, ok := p.(*plan.WorkingTable); ok && w.ID == id {
		return 1
	}
	n := 0
	for _, in := range p.Inputs() {
		n += countWorkingTables(in, id)
	}
	return n
}

// spineCut splits a recursive term into its spine and side inputs.
type spineCut struct {
	rec     *plan.Recursive
	working string
	sides   []plan.Node
	names   []string
}

// cut returns p with the working table replaced by a scan of cut.working
// and every side input by a scan of a pseudo relation named in cut.names.
func (c *spineCut) cut(p plan.Node) (plan.Node, error) {
	if countWorkingTables(p, c.rec.ID) == 0 {
		name := fmt.Sprintf("side input %d", len(c.sides)+1)
		c.sides = append(c.sides, p)
		c.names = append(c.names, name)
		return &plan.Scan{Relation: name, Cols: p.Columns()}, nil
	}
	switch n := p.(type) {
	case *plan.WorkingTable:
		return &plan.Scan{Relation: c.working, Cols: n.Cols}, nil
	case *plan.Filter:
		in, err := c.cut(n.Input)
		if err != nil {
			return nil, err
		}
		return &plan.Filter{Input: in, Pred: n.Pred}, nil
	case *plan.Project:
		in, err := c.cut(n.Input)
		if err != nil {
			return nil, err
		}
		return &plan.Project{Input: in, Exprs: n.Exprs, Cols: n.Cols}, nil
	case *plan.Sort:
		return c.cut(n.Input)
	case *plan.Join:
		l, err := c.cut(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := c.cut(n.Right)
		if err != nil {
			return nil, err
		}
		if err := c.checkJoin(n.Kind, c.onSpine(l)); err != nil {
			return nil, err
		}
		j := *n
		j.Left, j.Right = l, r
		return &j, nil
	case *plan.Distinct:
		if c.rec.Distinct {
			// The result is a set: removing duplicates on the way
			// changes nothing.
			return c.cut(n.Input)
		}
		return nil, c.unsupported("DISTINCT")
	case *plan.Aggregate:
		return nil, c.unsupported("an aggregate or GROUP BY")
	case *plan.Union:
		return nil, c.unsupported("a set operation")
	case *plan.Limit:
		return nil, c.unsupported("LIMIT")
	case *plan.TimeWindow:
		return nil, c.unsupported("TUMBLE or HOP")
	case *plan.Unnest:
		return nil, c.unsupported("unnest")
	case *plan.Recursive:
		return nil, c.unsupported("a nested WITH RECURSIVE query")
	}
	return nil, c.unsupported(fmt.Sprintf("%T", p))
}

// checkJoin accepts a join on the spine when its output is linear in the
// working table (for a fixed other side): an inner join with the working
// table on either side; a left, semi-, anti- or mark join with it on the
// left (preserved) side, a right join with it on the right. UNION recursion
// also needs the output to grow with the other side (delete-and-rederive
// reads a side's deletions as lost derivations): inner and semi-joins only.
func (c *spineCut) checkJoin(kind plan.JoinKind, spineLeft bool) error {
	switch {
	case kind == plan.InnerJoin,
		kind == plan.SemiJoin && spineLeft:
		return nil
	case c.rec.Distinct:
	case spineLeft && (kind == plan.LeftJoin || kind == plan.AntiJoin || kind == plan.MarkJoin),
		!spineLeft && kind == plan.RightJoin:
		return nil
	}
	what := map[plan.JoinKind]string{
		plan.LeftJoin: "an outer join", plan.RightJoin: "an outer join", plan.FullJoin: "an outer join",
		plan.SemiJoin: "EXISTS or IN (subquery)", plan.AntiJoin: "NOT EXISTS or NOT IN (subquery)",
		plan.MarkJoin: "a subquery test in an expression",
	}[kind]
	if c.rec.Distinct {
		return errs.Newf(errs.FeatureNotSupported,
			"%s over the recursive reference to %q is not supported in a UNION recursive term (inner joins and EXISTS/IN are)",
			what, c.rec.Name)
	}
	return errs.Newf(errs.FeatureNotSupported,
		"%s reading the recursive reference to %q on its inner or nullable side is not supported in a recursive term",
		what, c.rec.Name)
}

func (c *spineCut) unsupported(what string) error {
	mode := "UNION ALL"
	if c.rec.Distinct {
		mode = "UNION"
	}
	return errs.Newf(errs.FeatureNotSupported,
		"%s over the recursive reference to %q is not supported in a %s recursive term",
		what, c.rec.Name, mode)
}

// tag makes a cut spine carry the iteration column: the working table's
// rows end with it and so does the output, every node passing it through
// as its last column.
func (c *spineCut) tag(p plan.Node) plan.Node {
	switch n := p.(type) {
	case *plan.Scan: // the working table: side inputs are not tagged
		return &plan.Scan{Relation: n.Relation, Cols: withIteration(n.Cols)}
	case *plan.Filter:
		return &plan.Filter{Input: c.tag(n.Input), Pred: n.Pred}
	case *plan.Project:
		in := c.tag(n.Input)
		width := len(in.Columns())
		exprs := append(append([]plan.Expr(nil), n.Exprs...), &plan.ColRef{Index: width - 1, Name: iterationColumn.Name, Typ: iterationColumn.Type})
		return &plan.Project{Input: in, Exprs: exprs, Cols: withIteration(n.Cols)}
	case *plan.Join:
		lw, rw := len(n.Left.Columns()), len(n.Right.Columns())
		j := *n
		if c.onSpine(n.Right) {
			// Left | right | iteration: already last, and the right
			// side's columns keep their places in Residual and Test.
			j.Right = c.tag(n.Right)
			j.Cols = withIteration(n.Cols)
			return &j
		}
		// The tagged left side puts the iteration right after the left
		// columns: Residual and Test see the row without it, and the
		// output moves it last.
		j.Left = c.tag(n.Left)
		j.Residual = withoutColumn(n.Residual, lw)
		j.Test = withoutColumn(n.Test, lw)
		rest := n.Cols[lw:] // the right side's columns, or the mark
		switch n.Kind {
		case plan.SemiJoin, plan.AntiJoin:
			j.Cols = withIteration(n.Left.Columns())
			return &j
		case plan.MarkJoin:
			rw = len(rest)
		}
		j.Cols = append(withIteration(n.Left.Columns()), rest...)
		var exprs []plan.Expr
		for i := 0; i < lw; i++ {
			exprs = append(exprs, &plan.ColRef{Index: i, Name: j.Cols[i].Name, Typ: j.Cols[i].Type})
		}
		for i := lw + 1; i <= lw+rw; i++ {
			exprs = append(exprs, &plan.ColRef{Index: i, Name: j.Cols[i].Name, Typ: j.Cols[i].Type})
		}
		exprs = append(exprs, &plan.ColRef{Index: lw, Name: iterationColumn.Name, Typ: iterationColumn.Type})
		return &plan.Project{Input: &j, Exprs: exprs, Cols: withIteration(n.Cols)}
	}
	panic(fmt.Sprintf("unexpected %T on a recursive spine", p))
}

// onSpine reports whether p, part of a cut spine, reads the working table
// rather than a side input.
func (c *spineCut) onSpine(p plan.Node) bool {
	if s, ok := p.(*plan.Scan); ok {
		return s.Relation == c.working
	}
	for _, in := range p.Inputs() {
		if c.onSpine(in) {
			return true
		}
	}
	return false
}

func withIteration(cols []plan.Column) []plan.Column {
	return append(append([]plan.Column(nil), cols...), iterationColumn)
}

// withoutColumn evaluates e, an expression over a row, over a row with one
// more column at index at (the iteration a tagged spine carries), or
// returns nil for a nil e.
func withoutColumn(e plan.Expr, at int) plan.Expr {
	if e == nil {
		return nil
	}
	return &skipColumn{inner: e, at: at}
}

// skipColumn is an expression evaluated over its row without column at.
// Its scratch row makes it unsafe for concurrent use, as the circuit that
// holds it is.
type skipColumn struct {
	inner plan.Expr
	at    int
	buf   zset.Row
}

func (e *skipColumn) Type() types.Type { return e.inner.Type() }
func (e *skipColumn) String() string   { return e.inner.String() }

func (e *skipColumn) Eval(row zset.Row) (types.Value, error) {
	e.buf = append(append(e.buf[:0], row[:e.at]...), row[e.at+1:]...)
	v, err := e.inner.Eval(e.buf)
	clear(e.buf)
	return v, err
}
