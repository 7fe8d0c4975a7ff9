package sql

import (
	"errors"
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// This file binds window functions: calls with OVER, the WINDOW clause,
// and the plan.Window nodes that compute them over the FROM clause (or
// over the groups of a grouped query).

// winRef stands for the result of window function call idx of the query
// being bound. Like aggRef it exists only while the query is bound: once
// the Window nodes are planned it becomes a column reference.
type winRef struct {
	idx  int
	typ  types.Type
	name string
}

func (w *winRef) Type() types.Type { return w.typ }
func (w *winRef) String() string   { return fmt.Sprintf("%s#w%d", w.name, w.idx) }
func (w *winRef) Eval(zset.Row) (types.Value, error) {
	return types.Null, errs.New(errs.Internal, "window function reference evaluated outside its Window")
}

// winSpec is a bound window: PARTITION BY and ORDER BY over the FROM row.
type winSpec struct {
	partition []plan.Expr
	order     []plan.SortKey
}

// winCall is one window function call.
type winCall struct {
	fn   plan.WindowFunc // arguments over the FROM row
	spec int
}

// namedWindow is an entry of the WINDOW clause, bound on first use.
type namedWindow struct {
	def   *pg.WindowDef
	bound bool
	spec  winSpec
	frame plan.Frame
	// hasOrder and hasFrame say what the definition itself specifies.
	hasOrder, hasFrame bool
}

// winCollector gathers the window function calls of one query level.
type winCollector struct {
	named map[string]*namedWindow
	names []string
	specs []winSpec
	calls []winCall
	// nest counts the window function arguments and window definitions
	// being bound, where window functions are not allowed.
	nestArgs, nestDef int
}

// windowClause registers the WINDOW clause's definitions.
func (st *bindState) windowClause(defs []*pg.Node) (*winCollector, error) {
	wc := &winCollector{named: map[string]*namedWindow{}}
	for _, n := range defs {
		d := n.GetWindowDef()
		if d == nil {
			return nil, notSupported(-1, "WINDOW item %s is not supported", nodeName(n))
		}
		if _, dup := wc.named[d.Name]; dup {
			return nil, posErr(errs.Newf(errs.WindowingError, "window %q is already defined", d.Name), d.Location)
		}
		wc.named[d.Name] = &namedWindow{def: d}
		wc.names = append(wc.names, d.Name)
	}
	return wc, nil
}

// bindNamedWindows binds the definitions no call used, so that their
// errors are reported as PostgreSQL reports them.
func (ec *exprCtx) bindNamedWindows(wc *winCollector) error {
	for _, name := range wc.names {
		if _, err := ec.namedWindow(wc, name, -1); err != nil {
			return err
		}
	}
	return nil
}

// namedWindow returns the bound definition of window name.
func (ec *exprCtx) namedWindow(wc *winCollector, name string, loc int32) (*namedWindow, error) {
	nw := wc.named[name]
	if nw == nil {
		return nil, posErr(errs.Newf(errs.UndefinedObject, "window %q does not exist", name), loc)
	}
	if nw.bound {
		return nw, nil
	}
	spec, frame, hasOrder, hasFrame, err := ec.windowDef(wc, nw.def)
	if err != nil {
		return nil, err
	}
	nw.bound, nw.spec, nw.frame, nw.hasOrder, nw.hasFrame = true, spec, frame, hasOrder, hasFrame
	return nw, nil
}

// windowDef binds a window definition (an OVER clause's or a WINDOW
// entry's), inheriting from the window it refers to.
func (ec *exprCtx) windowDef(wc *winCollector, d *pg.WindowDef) (spec winSpec, frame plan.Frame, hasOrder, hasFrame bool, err error) {
	frame = plan.DefaultFrame
	if d.Refname != "" {
		base, err := ec.namedWindow(wc, d.Refname, d.Location)
		if err != nil {
			return spec, frame, false, false, err
		}
		if len(d.PartitionClause) > 0 {
			return spec, frame, false, false, posErr(errs.Newf(errs.WindowingError,
				"cannot override PARTITION BY clause of window %q", d.Refname), d.Location)
		}
		if base.hasOrder && len(d.OrderClause) > 0 {
			return spec, frame, false, false, posErr(errs.Newf(errs.WindowingError,
				"cannot override ORDER BY clause of window %q", d.Refname), d.Location)
		}
		if base.hasFrame {
			return spec, frame, false, false, posErr(errs.Newf(errs.WindowingError,
				"cannot copy window %q because it has a frame clause", d.Refname), d.Location)
		}
		spec.partition = base.spec.partition
		spec.order = base.spec.order
		hasOrder = base.hasOrder
	}
	wc.nestDef++
	defer func() { wc.nestDef-- }()
	dc := ec.in(kindSelect, ec.aggs)
	for _, n := range d.PartitionClause {
		e, err := dc.bind(n)
		if err != nil {
			return spec, frame, false, false, err
		}
		spec.partition = append(spec.partition, dc.resolveUnknown(e))
	}
	for _, n := range d.OrderClause {
		sb := n.GetSortBy()
		if sb == nil {
			return spec, frame, false, false, notSupported(d.Location, "window ORDER BY item %s is not supported", nodeName(n))
		}
		if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return spec, frame, false, false, notSupported(sb.Location, "ORDER BY ... USING is not supported")
		}
		e, err := dc.bind(sb.Node)
		if err != nil {
			return spec, frame, false, false, err
		}
		k := plan.SortKey{Expr: dc.resolveUnknown(e), Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
		k.NullsFirst = k.Desc
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			k.NullsFirst = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			k.NullsFirst = false
		}
		spec.order = append(spec.order, k)
		hasOrder = true
	}
	if d.FrameOptions&frameNonDefault != 0 {
		hasFrame = true
		if frame, err = ec.frame(d, spec.order); err != nil {
			return spec, frame, false, false, err
		}
	}
	return spec, frame, hasOrder, hasFrame, nil
}

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h), as pg_query
// passes them.
const (
	frameNonDefault         = 0x00001
	frameRange              = 0x00002
	frameRows               = 0x00004
	frameGroups             = 0x00008
	frameStartUnboundedPrec = 0x00020
	frameEndUnboundedPrec   = 0x00040
	frameStartUnboundedFoll = 0x00080
	frameEndUnboundedFoll   = 0x00100
	frameStartCurrentRow    = 0x00200
	frameEndCurrentRow      = 0x00400
	frameStartOffsetPrec    = 0x00800
	frameEndOffsetPrec      = 0x01000
	frameStartOffsetFoll    = 0x02000
	frameEndOffsetFoll      = 0x04000
	frameExcludeCurrentRow  = 0x08000
	frameExcludeGroup       = 0x10000
	frameExcludeTies        = 0x20000
)

// frame binds a window definition's frame clause; order is the window's
// ORDER BY.
func (ec *exprCtx) frame(d *pg.WindowDef, order []plan.SortKey) (plan.Frame, error) {
	orderKeys := len(order)
	opts := d.FrameOptions
	fr := plan.Frame{Mode: plan.FrameRange, Zone: ec.st.b.Zone}
	mode := "RANGE"
	switch {
	case opts&frameRows != 0:
		fr.Mode, mode = plan.FrameRows, "ROWS"
	case opts&frameGroups != 0:
		fr.Mode, mode = plan.FrameGroups, "GROUPS"
	}
	offsets := opts&(frameStartOffsetPrec|frameEndOffsetPrec|frameStartOffsetFoll|frameEndOffsetFoll) != 0
	if fr.Mode == plan.FrameRange && offsets && orderKeys != 1 {
		return fr, posErr(errs.New(errs.WindowingError,
			"RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"), d.Location)
	}
	if fr.Mode == plan.FrameGroups && orderKeys == 0 {
		return fr, posErr(errs.New(errs.WindowingError, "GROUPS mode requires an ORDER BY clause"), d.Location)
	}
	bound := func(unbPrec, unbFoll, cur, offPrec, offFoll int32, off *pg.Node, which string) (plan.FrameBound, error) {
		switch {
		case opts&unbPrec != 0:
			return plan.FrameBound{Kind: plan.UnboundedPreceding}, nil
		case opts&unbFoll != 0:
			return plan.FrameBound{Kind: plan.UnboundedFollowing}, nil
		case opts&cur != 0:
			return plan.FrameBound{Kind: plan.CurrentRow}, nil
		}
		kind := plan.OffsetPreceding
		if opts&offFoll != 0 {
			kind = plan.OffsetFollowing
		} else if opts&offPrec == 0 {
			return plan.FrameBound{}, errs.Newf(errs.Internal, "window frame %s bound is missing", which)
		}
		if fr.Mode == plan.FrameRange {
			v, t, err := ec.rangeOffset(off, order[0].Expr.Type(), d.Location)
			return plan.FrameBound{Kind: kind, Value: v, ValueType: t}, err
		}
		n, err := ec.frameOffset(off, mode, which)
		return plan.FrameBound{Kind: kind, Offset: n}, err
	}
	var err error
	if fr.Start, err = bound(frameStartUnboundedPrec, frameStartUnboundedFoll, frameStartCurrentRow,
		frameStartOffsetPrec, frameStartOffsetFoll, d.StartOffset, "starting"); err != nil {
		return fr, err
	}
	if fr.End, err = bound(frameEndUnboundedPrec, frameEndUnboundedFoll, frameEndCurrentRow,
		frameEndOffsetPrec, frameEndOffsetFoll, d.EndOffset, "ending"); err != nil {
		return fr, err
	}
	switch {
	case opts&frameExcludeCurrentRow != 0:
		fr.Exclude = plan.ExcludeCurrentRow
	case opts&frameExcludeGroup != 0:
		fr.Exclude = plan.ExcludeGroup
	case opts&frameExcludeTies != 0:
		fr.Exclude = plan.ExcludeTies
	}
	return fr, nil
}

// frameOffset evaluates a ROWS or GROUPS frame offset: a constant bigint
// that is neither NULL nor negative.
func (ec *exprCtx) frameOffset(n *pg.Node, mode, which string) (int64, error) {
	loc := exprLocation(n)
	oc := &exprCtx{st: ec.st, sc: ec.sc, kind: kindLimit}
	e, err := oc.bind(n)
	if err != nil {
		return 0, err
	}
	if hasColRefs(e) {
		return 0, posErr(errs.Newf(errs.InvalidColumnRef, "argument of %s must not contain variables", mode), loc)
	}
	e2, err := oc.coerce(e, types.Of(types.Int8), implicitCoercion)
	if errors.Is(err, errNoCast) {
		return 0, posErr(errs.Newf(errs.DatatypeMismatch, "argument of %s must be type bigint, not type %s", mode, e.Type()), loc)
	}
	if err != nil {
		return 0, err
	}
	v, err := e2.Eval(nil)
	if err != nil {
		return 0, posErr(err, loc)
	}
	if v.IsNull() {
		return 0, errs.Newf(errs.NullValueNotAllowed, "frame %s offset must not be null", which)
	}
	if v.Int() < 0 {
		return 0, errs.Newf(errs.InvalidWindowFrame, "frame %s offset must not be negative", which)
	}
	return v.Int(), nil
}

// windowCall binds a function call with an OVER clause.
func (ec *exprCtx) windowCall(f *pg.FuncCall, schema, name string) (plan.Expr, error) {
	wc := ec.st.wins
	switch {
	case ec.kind == kindAggArg:
		return nil, posErr(errs.New(errs.GroupingError, "aggregate function calls cannot contain window function calls"), f.Location)
	case wc != nil && wc.nestArgs > 0:
		return nil, posErr(errs.New(errs.WindowingError, "window function calls cannot be nested"), f.Location)
	case wc != nil && wc.nestDef > 0:
		return nil, posErr(errs.New(errs.WindowingError, "window functions are not allowed in window definitions"), f.Location)
	case wc == nil || (ec.kind != kindSelect && ec.kind != kindOrderBy):
		msg := "window functions are not allowed in " + ec.kind.where()
		if ec.kind == kindScalar {
			msg = "window functions are not allowed here"
		}
		return nil, posErr(errs.New(errs.WindowingError, msg), f.Location)
	}
	display := name
	if schema != "" {
		display = schema + "." + name
	}
	builtin := schema == "" || schema == "pg_catalog"
	isWindow := builtin && windowFunctions[name]
	isAgg := builtin && aggregateNames[name]
	switch {
	case builtin && (plan.IsOrderedSet(name) || f.AggWithinGroup && plan.IsHypothetical(name)):
		return nil, notSupported(f.Location, "OVER is not supported for ordered-set aggregate %s", name)
	case builtin && (otherAggregates[name] || isAgg && !windowAggregates[name]):
		return nil, notSupported(f.Location, "aggregate function %s() is not supported yet as a window function", name)
	case !isWindow && !isAgg:
		if builtin && volatileFunctions[name] {
			return nil, nonDeterministic(f.Location, name+"()")
		}
		return nil, posErr(errs.Newf(errs.WrongObjectType,
			"OVER specified, but %s is not a window function nor an aggregate function", display), f.Location)
	case f.AggDistinct:
		return nil, notSupported(f.Location, "DISTINCT is not implemented for window functions")
	case len(f.AggOrder) > 0:
		return nil, notSupported(f.Location, "aggregate ORDER BY is not implemented for window functions")
	case f.AggWithinGroup:
		return nil, posErr(errs.Newf(errs.WrongObjectType, "WITHIN GROUP specified, but %s is not an ordered-set aggregate", display), f.Location)
	case f.AggFilter != nil && !isAgg:
		return nil, notSupported(f.Location, "FILTER is not implemented for non-aggregate window functions")
	case f.AggStar && name != "count":
		return nil, posErr(errs.Newf(errs.UndefinedFunction, "function %s(*) does not exist", display), f.Location)
	case f.FuncVariadic:
		return nil, notSupported(f.Location, "VARIADIC is not supported yet")
	}

	args, locs, filter, err := ec.windowArgs(wc, f)
	if err != nil {
		return nil, err
	}
	fn := plan.WindowFunc{Func: name, Filter: filter}
	if isAgg {
		err = ec.windowAggregate(&fn, f, args)
	} else {
		err = ec.windowFunction(&fn, f, args, locs)
	}
	if err != nil {
		return nil, err
	}

	spec, frame, err := ec.over(wc, f.Over)
	if err != nil {
		return nil, err
	}
	fn.Frame = frame
	return &winRef{idx: wc.add(fn, spec), typ: fn.Type, name: name}, nil
}

// windowArgs binds a window function's arguments and FILTER, where
// aggregates of the query level may appear but window functions may not.
func (ec *exprCtx) windowArgs(wc *winCollector, f *pg.FuncCall) (args []plan.Expr, locs []int32, filter plan.Expr, err error) {
	wc.nestArgs++
	defer func() { wc.nestArgs-- }()
	args = make([]plan.Expr, len(f.Args))
	locs = make([]int32, len(f.Args))
	ac := ec.in(kindSelect, ec.aggs)
	for i, a := range f.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, nil, nil, notSupported(f.Location, "named function arguments are not supported yet")
		}
		if args[i], err = ac.bind(a); err != nil {
			return nil, nil, nil, err
		}
		locs[i] = exprLocation(a)
	}
	if f.AggFilter != nil {
		if filter, err = ec.in(kindFilter, nil).bindBool(f.AggFilter, "FILTER"); err != nil {
			return nil, nil, nil, err
		}
	}
	return args, locs, filter, nil
}

// over binds an OVER clause to a window spec (an index into wc.specs) and
// a frame.
func (ec *exprCtx) over(wc *winCollector, d *pg.WindowDef) (int, plan.Frame, error) {
	var spec winSpec
	var frame plan.Frame
	if d.Name != "" {
		// OVER w: the named window as it is, frame included.
		nw, err := ec.namedWindow(wc, d.Name, d.Location)
		if err != nil {
			return 0, frame, err
		}
		spec, frame = nw.spec, nw.frame
	} else {
		var err error
		if spec, frame, _, _, err = ec.windowDef(wc, d); err != nil {
			return 0, frame, err
		}
	}
	for i, s := range wc.specs {
		if sameSpec(s, spec) {
			return i, frame, nil
		}
	}
	wc.specs = append(wc.specs, spec)
	return len(wc.specs) - 1, frame, nil
}

func sameSpec(a, b winSpec) bool {
	if len(a.partition) != len(b.partition) || len(a.order) != len(b.order) {
		return false
	}
	for i := range a.partition {
		if !exprEqual(a.partition[i], b.partition[i]) {
			return false
		}
	}
	for i := range a.order {
		x, y := a.order[i], b.order[i]
		if x.Desc != y.Desc || x.NullsFirst != y.NullsFirst || !exprEqual(x.Expr, y.Expr) {
			return false
		}
	}
	return true
}

// add records a call, returning its index; an identical call (same
// function, arguments, filter, window and frame) is computed once.
func (wc *winCollector) add(fn plan.WindowFunc, spec int) int {
	for i, c := range wc.calls {
		if c.spec != spec || c.fn.Func != fn.Func || c.fn.Frame != fn.Frame || len(c.fn.Args) != len(fn.Args) ||
			!exprEqual(c.fn.Filter, fn.Filter) {
			continue
		}
		same := true
		for k := range fn.Args {
			same = same && exprEqual(c.fn.Args[k], fn.Args[k])
		}
		if same {
			return i
		}
	}
	wc.calls = append(wc.calls, winCall{fn: fn, spec: spec})
	return len(wc.calls) - 1
}

// windowAggregates are the aggregates that may be used as window
// functions (windowAggregate and the Window operator implement them).
var windowAggregates = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true,
}

// windowAggregate resolves an aggregate used as a window function.
func (ec *exprCtx) windowAggregate(fn *plan.WindowFunc, f *pg.FuncCall, args []plan.Expr) error {
	if fn.Func == "every" {
		fn.Func = "bool_and"
	}
	if f.AggStar {
		fn.Type = types.Of(types.Int8)
		return nil
	}
	if len(args) != 1 {
		return undefinedFunction(fn.Func, args, f.Location)
	}
	argType, t, err := types.ResolveAggregate(fn.Func, args[0].Type())
	if err != nil {
		return posErr(err, f.Location)
	}
	if argType.ID == types.Unknown {
		argType = types.Of(types.Text)
	}
	arg, err := ec.coerce(args[0], argType, implicitCoercion)
	if err != nil {
		return posErr(err, f.Location)
	}
	fn.Args, fn.Type = []plan.Expr{arg}, t
	return nil
}

// windowFunction resolves one of the window-only functions.
func (ec *exprCtx) windowFunction(fn *plan.WindowFunc, f *pg.FuncCall, args []plan.Expr, locs []int32) error {
	name := fn.Func
	noSuch := func() error { return undefinedFunction(name, args, f.Location) }
	toInt4 := func(e plan.Expr) (plan.Expr, error) {
		if !castAllowed(e.Type().ID, types.Int4, implicitCoercion) {
			return nil, noSuch()
		}
		return ec.coerce(e, types.Of(types.Int4), implicitCoercion)
	}
	polymorphic := func(e plan.Expr) error {
		if e.Type().ID == types.Unknown {
			return posErr(errs.New(errs.DatatypeMismatch,
				"could not determine polymorphic type because input has type unknown"), f.Location)
		}
		return nil
	}
	switch name {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
		if len(args) > 0 {
			if name == "row_number" {
				return noSuch()
			}
			return posErr(errs.Newf(errs.WrongObjectType, "WITHIN GROUP is required for ordered-set aggregate %s", name), f.Location)
		}
		fn.Type = types.Of(types.Int8)
		if name == "percent_rank" || name == "cume_dist" {
			fn.Type = types.Of(types.Float8)
		}
	case "ntile":
		if len(args) != 1 {
			return noSuch()
		}
		a, err := toInt4(args[0])
		if err != nil {
			return err
		}
		if hasColRefs(a) || hasAggRefs(a) {
			return notSupported(locs[0], "ntile() with an argument that varies by row is not supported")
		}
		fn.Args, fn.Type = []plan.Expr{a}, types.Of(types.Int4)
	case "lag", "lead":
		if len(args) < 1 || len(args) > 3 {
			return noSuch()
		}
		off := plan.Expr(&plan.Const{Val: types.MakeInt(types.Int4, 1), Typ: types.Of(types.Int4)})
		if len(args) >= 2 {
			var err error
			if off, err = toInt4(args[1]); err != nil {
				return err
			}
		}
		val := args[0]
		var def plan.Expr
		if len(args) == 3 {
			ts := []types.Type{val.Type(), args[2].Type()}
			if ts[0].ID == types.Unknown && ts[1].ID == types.Unknown {
				return polymorphic(val)
			}
			t, err := types.CommonType(name, ts)
			if err != nil || !castAllowed(ts[0].ID, t.ID, implicitCoercion) || !castAllowed(ts[1].ID, t.ID, implicitCoercion) {
				return noSuch()
			}
			if val, err = ec.coerce(val, t, implicitCoercion); err != nil {
				return err
			}
			if def, err = ec.coerce(args[2], t, implicitCoercion); err != nil {
				return err
			}
		} else {
			if err := polymorphic(val); err != nil {
				return err
			}
			def = &plan.Const{Val: types.Null, Typ: val.Type()}
		}
		fn.Args, fn.Type = []plan.Expr{val, off, def}, val.Type()
	case "first_value", "last_value":
		if len(args) != 1 {
			return noSuch()
		}
		if err := polymorphic(args[0]); err != nil {
			return err
		}
		fn.Args, fn.Type = args, args[0].Type()
	case "nth_value":
		if len(args) != 2 {
			return noSuch()
		}
		if err := polymorphic(args[0]); err != nil {
			return err
		}
		nth, err := toInt4(args[1])
		if err != nil {
			return err
		}
		fn.Args, fn.Type = []plan.Expr{args[0], nth}, args[0].Type()
	default:
		return notSupported(f.Location, "window function %s() is not supported yet", name)
	}
	return nil
}

// planWindows puts one Window node per distinct window (PARTITION BY and
// ORDER BY) over node and rewrites the target list's window function
// references into columns of the last one. over maps an expression bound
// over the FROM row to one over node's row (through the grouping, for a
// grouped query).
func (st *bindState) planWindows(node plan.Node, wc *winCollector, tl []*target, over func(plan.Expr) (plan.Expr, error)) (plan.Node, error) {
	if wc == nil || len(wc.calls) == 0 {
		return node, nil
	}
	colOf := make([]int, len(wc.calls))
	for s, spec := range wc.specs {
		w := &plan.Window{Input: node}
		for _, e := range spec.partition {
			x, err := over(e)
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, x)
		}
		for _, k := range spec.order {
			x, err := over(k.Expr)
			if err != nil {
				return nil, err
			}
			w.OrderBy = append(w.OrderBy, plan.SortKey{Expr: x, Desc: k.Desc, NullsFirst: k.NullsFirst})
		}
		w.Cols = append([]plan.Column(nil), node.Columns()...)
		for i, c := range wc.calls {
			if c.spec != s {
				continue
			}
			fn := c.fn
			fn.Args = make([]plan.Expr, len(c.fn.Args))
			for k, a := range c.fn.Args {
				x, err := over(a)
				if err != nil {
					return nil, err
				}
				fn.Args[k] = x
			}
			if fn.Filter != nil {
				x, err := over(fn.Filter)
				if err != nil {
					return nil, err
				}
				fn.Filter = x
			}
			colOf[i] = len(w.Cols)
			w.Funcs = append(w.Funcs, fn)
			w.Cols = append(w.Cols, plan.Column{Name: fn.Func, Type: fn.Type})
		}
		if len(w.Funcs) > 0 {
			node = w
		}
	}
	cols := node.Columns()
	for _, t := range tl {
		t.expr, _ = transform(t.expr, func(x plan.Expr) (plan.Expr, bool, error) {
			if r, ok := x.(*winRef); ok {
				i := colOf[r.idx]
				return &plan.ColRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}, true, nil
			}
			return nil, false, nil
		})
	}
	return node, nil
}
