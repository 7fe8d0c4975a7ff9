package diff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
)

// Plan text for set operations, TopK and windows:
//
//	intersect [all] | except [all]          (two inputs)
//	topk [partition=(e, ...)] [order=(e [desc] [nulls first|last], ...)]
//	     [limit=N] [offset=N] [rownumber]
//	window [partition=(e, ...)] [order=(...)] funcs=(call [frame], ...)
//
// A window call is fn(args) with an optional filter (where e) and frame
// "rows|range|groups between BOUND and BOUND [exclude current row|group|
// ties]"; lag and lead take 1 to 3 arguments (offset 1 and default NULL
// when left out).

// buildOrdered builds the nodes above; ok is false for other kinds.
func (pp *planParser) buildOrdered(kind string, lx *lexer, children []plan.Node) (plan.Node, bool, error) {
	switch kind {
	case "intersect", "except":
		if err := needInputs(children, 2); err != nil {
			return nil, true, err
		}
		k := plan.Intersect
		if kind == "except" {
			k = plan.Except
		}
		all := lx.accept("all")
		return &plan.SetOp{Kind: k, All: all, Left: children[0], Right: children[1], Cols: children[0].Columns()}, true, lx.end()
	case "topk":
		if err := needInputs(children, 1); err != nil {
			return nil, true, err
		}
		n, err := pp.topK(lx, children[0])
		return n, true, err
	case "window":
		if err := needInputs(children, 1); err != nil {
			return nil, true, err
		}
		n, err := pp.window(lx, children[0])
		return n, true, err
	}
	return nil, false, nil
}

func (pp *planParser) topK(lx *lexer, in plan.Node) (plan.Node, error) {
	ep := &exprParser{lx: lx, cols: in.Columns()}
	var part []plan.Expr
	var keys []plan.SortKey
	count, offset := int64(-1), int64(0)
	rn := ""
	for lx.peek() != "" {
		switch w := lx.next(); w {
		case "partition":
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			es, err := ep.list()
			if err != nil {
				return nil, err
			}
			part = es
		case "order":
			ks, err := sortKeys(lx, ep)
			if err != nil {
				return nil, err
			}
			keys = ks
		case "limit", "offset":
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			v, err := strconv.ParseInt(lx.next(), 10, 64)
			if err != nil {
				return nil, err
			}
			if w == "limit" {
				count = v
			} else {
				offset = v
			}
		case "rownumber":
			rn = "rn"
		default:
			return nil, fmt.Errorf("unexpected %q", w)
		}
	}
	return plan.NewTopK(in, part, keys, count, offset, rn), nil
}

// sortKeys parses "=(e [desc] [nulls first|last], ...)".
func sortKeys(lx *lexer, ep *exprParser) ([]plan.SortKey, error) {
	if err := lx.expect("="); err != nil {
		return nil, err
	}
	if err := lx.expect("("); err != nil {
		return nil, err
	}
	var keys []plan.SortKey
	for {
		e, err := ep.additive()
		if err != nil {
			return nil, err
		}
		k := plan.SortKey{Expr: e}
		if lx.accept("desc") {
			k.Desc = true
		} else {
			lx.accept("asc")
		}
		k.NullsFirst = k.Desc
		if lx.accept("nulls") {
			switch lx.next() {
			case "first":
				k.NullsFirst = true
			case "last":
				k.NullsFirst = false
			default:
				return nil, fmt.Errorf("want first or last after nulls")
			}
		}
		keys = append(keys, k)
		if !lx.accept(",") {
			break
		}
	}
	return keys, lx.expect(")")
}

func (pp *planParser) window(lx *lexer, in plan.Node) (plan.Node, error) {
	cols := in.Columns()
	ep := &exprParser{lx: lx, cols: cols}
	w := &plan.Window{Input: in}
	for lx.peek() != "" {
		switch kw := lx.next(); kw {
		case "partition":
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			es, err := ep.list()
			if err != nil {
				return nil, err
			}
			w.PartitionBy = es
		case "order":
			ks, err := sortKeys(lx, ep)
			if err != nil {
				return nil, err
			}
			w.OrderBy = ks
		case "funcs":
			if err := lx.expect("="); err != nil {
				return nil, err
			}
			if err := lx.expect("("); err != nil {
				return nil, err
			}
			for {
				f, err := windowCall(lx, ep)
				if err != nil {
					return nil, err
				}
				w.Funcs = append(w.Funcs, f)
				if !lx.accept(",") {
					break
				}
			}
			if err := lx.expect(")"); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected %q", kw)
		}
	}
	w.Cols = append([]plan.Column(nil), cols...)
	for _, f := range w.Funcs {
		w.Cols = append(w.Cols, plan.Column{Name: f.Func, Type: f.Type})
	}
	return w, nil
}

func windowCall(lx *lexer, ep *exprParser) (plan.WindowFunc, error) {
	f := plan.WindowFunc{Func: strings.ToLower(lx.next()), Frame: plan.DefaultFrame}
	if err := lx.expect("("); err != nil {
		return f, err
	}
	if !lx.accept(")") {
		if lx.accept("*") {
			if err := lx.expect(")"); err != nil {
				return f, err
			}
		} else {
			for {
				e, err := ep.expr()
				if err != nil {
					return f, err
				}
				f.Args = append(f.Args, e)
				if !lx.accept(",") {
					break
				}
			}
			if err := lx.expect(")"); err != nil {
				return f, err
			}
		}
	}
	if lx.accept("filter") {
		if err := lx.expect("("); err != nil {
			return f, err
		}
		lx.accept("where")
		e, err := ep.expr()
		if err != nil {
			return f, err
		}
		f.Filter = e
		if err := lx.expect(")"); err != nil {
			return f, err
		}
	}
	if mode, ok := map[string]plan.FrameMode{"rows": plan.FrameRows, "range": plan.FrameRange, "groups": plan.FrameGroups}[lx.peek()]; ok {
		lx.next()
		f.Frame = plan.Frame{Mode: mode}
		if err := lx.expect("between"); err != nil {
			return f, err
		}
		var err error
		if f.Frame.Start, err = frameBound(lx); err != nil {
			return f, err
		}
		if err := lx.expect("and"); err != nil {
			return f, err
		}
		if f.Frame.End, err = frameBound(lx); err != nil {
			return f, err
		}
		if mode == plan.FrameRange {
			// RANGE offsets are values (integers here).
			for _, b := range []*plan.FrameBound{&f.Frame.Start, &f.Frame.End} {
				if b.Kind == plan.OffsetPreceding || b.Kind == plan.OffsetFollowing {
					b.Value, b.ValueType = types.MakeInt(types.Int4, b.Offset), types.Of(types.Int4)
					b.Offset = 0
				}
			}
		}
		if lx.accept("exclude") {
			switch lx.next() {
			case "current":
				f.Frame.Exclude = plan.ExcludeCurrentRow
				lx.accept("row")
			case "group":
				f.Frame.Exclude = plan.ExcludeGroup
			case "ties":
				f.Frame.Exclude = plan.ExcludeTies
			}
		}
	}
	switch f.Func {
	case "row_number", "rank", "dense_rank":
		f.Type = types.Of(types.Int8)
	case "percent_rank", "cume_dist":
		f.Type = types.Of(types.Float8)
	case "ntile":
		f.Type = types.Of(types.Int4)
	case "lag", "lead":
		t := f.Args[0].Type()
		if len(f.Args) < 2 {
			f.Args = append(f.Args, intConst(1))
		}
		if len(f.Args) < 3 {
			f.Args = append(f.Args, &plan.Const{Val: types.Null, Typ: t})
		}
		f.Args[2] = castTo(f.Args[2], t)
		f.Type = t
	case "first_value", "last_value", "nth_value":
		f.Type = f.Args[0].Type()
	default:
		f.Type = types.Of(types.Int8)
		if len(f.Args) > 0 {
			var err error
			if f.Type, err = types.AggregateType(f.Func, f.Args[0].Type()); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

func frameBound(lx *lexer) (plan.FrameBound, error) {
	switch w := lx.next(); w {
	case "unbounded":
		if lx.accept("preceding") {
			return plan.FrameBound{Kind: plan.UnboundedPreceding}, nil
		}
		return plan.FrameBound{Kind: plan.UnboundedFollowing}, lx.expect("following")
	case "current":
		return plan.FrameBound{Kind: plan.CurrentRow}, lx.expect("row")
	default:
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return plan.FrameBound{}, fmt.Errorf("bad frame bound %q", w)
		}
		if lx.accept("preceding") {
			return plan.FrameBound{Kind: plan.OffsetPreceding, Offset: n}, nil
		}
		return plan.FrameBound{Kind: plan.OffsetFollowing, Offset: n}, lx.expect("following")
	}
}
