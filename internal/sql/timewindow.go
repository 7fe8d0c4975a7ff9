package sql

import (
	"errors"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Time windows in FROM, as table functions:
//
//	TUMBLE(relation, time_column, size)
//	HOP(relation, time_column, slide, size)
//
// relation is a table, view, materialized view or WITH query named
// directly; time_column one of its columns, of type timestamp or
// timestamptz; slide and size constant intervals without months or years
// (a day is 24 hours), positive, size a multiple of slide. The result is
// the relation's columns followed by window_start and window_end, of the
// time column's type, one row per window containing the row's time (see
// plan.TimeWindow). The FROM item is named after the function unless
// aliased.

// microsPerDay is the length of an interval's day in a window: 24 hours,
// as date_bin counts it.
const microsPerDay = 86_400_000_000

// windowSource returns the relation a TUMBLE or HOP call in FROM reads, as
// a RangeVar, or nil when rf is not such a call.
func windowSource(rf *pg.RangeFunction) *pg.RangeVar {
	fc := rangeFuncCall(rf)
	if fc == nil {
		return nil
	}
	if _, name := funcName(fc.Funcname); name != "tumble" && name != "hop" {
		return nil
	}
	if len(fc.Args) == 0 {
		return nil
	}
	cr := fc.Args[0].GetColumnRef()
	if cr == nil {
		return nil
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return nil
		}
		parts = append(parts, s.Sval)
	}
	switch len(parts) {
	case 1:
		return &pg.RangeVar{Relname: parts[0], Inh: true, Location: cr.Location}
	case 2:
		return &pg.RangeVar{Schemaname: parts[0], Relname: parts[1], Inh: true, Location: cr.Location}
	}
	return nil
}

// TimeWindowSource returns the relation a TUMBLE or HOP call in FROM
// reads, or nil when rf is not such a call.
func TimeWindowSource(rf *pg.RangeFunction) *pg.RangeVar { return windowSource(rf) }

// rangeFuncCall returns the one function call of a function in FROM, or
// nil.
func rangeFuncCall(rf *pg.RangeFunction) *pg.FuncCall {
	if len(rf.Functions) != 1 {
		return nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 {
		return nil
	}
	return items[0].GetFuncCall()
}

// rangeFunction binds a function in FROM: TUMBLE or HOP.
func (st *bindState) rangeFunction(rf *pg.RangeFunction, env *cteEnv) (*fromItem, error) {
	fc := rangeFuncCall(rf)
	var name string
	if fc != nil {
		_, name = funcName(fc.Funcname)
	}
	if !rf.IsRowsfrom && name == "session" {
		// Other streaming systems' session window table function: say
		// what to write instead.
		return nil, notSupported(fc.Location, "SESSION windows are not supported; write sessions with lag() and a running sum() OVER the partition (docs/nexmark.md, q11)")
	}
	if rf.IsRowsfrom || (name != "tumble" && name != "hop") {
		return nil, notSupported(-1, "functions in FROM are not supported yet")
	}
	upper := strings.ToUpper(name)
	if rf.Lateral {
		return nil, notSupported(fc.Location, "LATERAL %s is not supported: %s reads a relation, not the FROM items before it", upper, upper)
	}
	if rf.Ordinality {
		return nil, notSupported(fc.Location, "WITH ORDINALITY is not supported for %s", upper)
	}
	if items := rf.Functions[0].GetList().GetItems(); len(items) > 1 && items[1].GetNode() != nil || len(rf.Coldeflist) > 0 {
		return nil, notSupported(fc.Location, "a column definition list is not supported for %s", upper)
	}
	usage := "TUMBLE(relation, time_column, size)"
	want := 3
	if name == "hop" {
		usage, want = "HOP(relation, time_column, slide, size)", 4
	}
	if len(fc.Args) != want || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil || fc.FuncVariadic {
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "%s takes %d arguments: %s", upper, want, usage), fc.Location)
	}
	for _, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, notSupported(fc.Location, "named arguments are not supported for %s", upper)
		}
	}
	rv := windowSource(rf)
	if rv == nil {
		return nil, posErr(errs.Newf(errs.SyntaxError, "the first argument of %s must name a relation: %s", upper, usage), exprLocation(fc.Args[0]))
	}
	src, err := st.rangeVar(rv, env)
	if err != nil {
		return nil, err
	}
	input := src.tree.leaf

	// The time column, by name among the relation's columns.
	tc := fc.Args[1].GetColumnRef()
	var colName string
	if tc != nil && len(tc.Fields) == 1 && tc.Fields[0].GetString_() != nil {
		colName = tc.Fields[0].GetString_().Sval
	}
	if colName == "" {
		return nil, posErr(errs.Newf(errs.SyntaxError, "the second argument of %s must name a column of %s: %s", upper, rv.Relname, usage), exprLocation(fc.Args[1]))
	}
	timeCol := -1
	for i, c := range src.cols {
		if c.name != colName {
			continue
		}
		if timeCol >= 0 {
			return nil, posErr(errs.Newf(errs.AmbiguousColumn, "column reference %q is ambiguous", colName), tc.Location)
		}
		timeCol = i
	}
	if timeCol < 0 {
		return nil, posErr(errs.Newf(errs.UndefinedColumn, "column %q does not exist in %s", colName, rv.Relname), tc.Location)
	}
	inCols := input.Columns()
	tt := inCols[timeCol].Type
	if tt.ID != types.Timestamp && tt.ID != types.TimestampTZ {
		return nil, posErr(errs.Newf(errs.DatatypeMismatch,
			"the time column of %s must be of type timestamp or timestamp with time zone, not %s", upper, tt), tc.Location)
	}

	var lengths []int64
	for i, a := range fc.Args[2:] {
		what := "size"
		if name == "hop" && i == 0 {
			what = "slide"
		}
		us, err := st.windowLength(a, upper, what)
		if err != nil {
			return nil, err
		}
		lengths = append(lengths, us)
	}
	w := &plan.TimeWindow{Input: input, Func: name, TimeCol: timeCol, Slide: lengths[0], Size: lengths[len(lengths)-1]}
	if w.Size%w.Slide != 0 {
		return nil, posErr(errs.Newf(errs.InvalidParameterValue, "the size of HOP must be a multiple of its slide"), exprLocation(fc.Args[3]))
	}
	cols := append([]plan.Column(nil), inCols...)
	for i, c := range src.cols {
		cols[i].Name = c.name
	}
	cols = append(cols, plan.Column{Name: "window_start", Type: types.Of(tt.ID)}, plan.Column{Name: "window_end", Type: types.Of(tt.ID)})
	w.Cols = cols
	return leafItem(w, cols, rf.Alias, name)
}

// windowLength binds a window's slide or size: a constant interval
// without months, positive; it returns microseconds.
func (st *bindState) windowLength(n *pg.Node, fn, what string) (int64, error) {
	loc := exprLocation(n)
	ec := &exprCtx{st: st, sc: emptyScope, kind: kindScalar}
	e, err := ec.bind(n)
	if err != nil {
		return 0, err
	}
	if hasColRefs(e) {
		return 0, posErr(errs.Newf(errs.FeatureNotSupported, "the %s of %s must be a constant", what, fn), loc)
	}
	e, err = ec.coerce(e, types.Of(types.Interval), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return 0, posErr(errs.Newf(errs.DatatypeMismatch, "the %s of %s must be an interval", what, fn), loc)
	}
	if err != nil {
		return 0, err
	}
	v, err := e.Eval(nil)
	if err != nil {
		return 0, posErr(err, loc)
	}
	if v.IsNull() {
		return 0, posErr(errs.Newf(errs.InvalidParameterValue, "the %s of %s must not be NULL", what, fn), loc)
	}
	iv := v.Interval()
	if iv.Months != 0 {
		return 0, posErr(errs.Newf(errs.FeatureNotSupported, "the %s of %s cannot contain months or years", what, fn), loc)
	}
	us := int64(iv.Days)*microsPerDay + iv.Micros
	if iv.Days != 0 && (us-iv.Micros)/microsPerDay != int64(iv.Days) {
		return 0, posErr(errs.Newf(errs.IntervalFieldOverflow, "the %s of %s is out of range", what, fn), loc)
	}
	if us <= 0 {
		return 0, posErr(errs.Newf(errs.InvalidParameterValue, "the %s of %s must be greater than zero", what, fn), loc)
	}
	return us, nil
}

// formatIterative renders a Recursive, WorkingTable or TimeWindow node's
// line of FormatPlan.
func formatIterative(n plan.Node) string {
	switch x := n.(type) {
	case *plan.Recursive:
		op := "UNION ALL"
		if x.Distinct {
			op = "UNION"
		}
		return fmt.Sprintf("Recursive %s #%d %s %s", x.Name, x.ID, op, formatCols(x.Cols))
	case *plan.WorkingTable:
		return fmt.Sprintf("WorkingTable %s #%d %s", x.Name, x.ID, formatCols(x.Cols))
	case *plan.TimeWindow:
		lengths := intervalText(x.Size)
		if x.Func == "hop" {
			lengths = intervalText(x.Slide) + " " + lengths
		}
		return fmt.Sprintf("TimeWindow %s time=%s %s %s", x.Func, x.Input.Columns()[x.TimeCol].Name, lengths, formatCols(x.Cols))
	}
	return fmt.Sprintf("%T", n)
}

func intervalText(us int64) string {
	return string(types.AppendInterval(nil, types.IntervalValue{Micros: us}))
}
