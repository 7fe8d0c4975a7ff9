package plan

// Children returns the direct subexpressions of e, in a fixed order (the
// order the binder's rewrites rebuild them in). Leaves (ColRef, Const,
// Param) and expression kinds of other packages have none.
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *BinOp:
		return []Expr{e.Left, e.Right}
	case *UnaryOp:
		return []Expr{e.Arg}
	case *Cast:
		return []Expr{e.Arg}
	case *And:
		return e.Args
	case *Or:
		return e.Args
	case *Not:
		return []Expr{e.Arg}
	case *IsNull:
		return []Expr{e.Arg}
	case *IsDistinct:
		return []Expr{e.Left, e.Right}
	case *IsBool:
		return []Expr{e.Arg}
	case *Case:
		var out []Expr
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if e.Else != nil {
			out = append(out, e.Else)
		}
		return out
	case *Coalesce:
		return e.Args
	case *NullIf:
		return []Expr{e.Left, e.Right}
	case *InList:
		return append([]Expr{e.Arg}, e.List...)
	case *Func:
		return e.Args
	}
	return nil
}

// ColumnsRead calls f for every column reference in e.
func ColumnsRead(e Expr, f func(*ColRef)) {
	if e == nil {
		return
	}
	if c, ok := e.(*ColRef); ok {
		f(c)
		return
	}
	for _, k := range Children(e) {
		ColumnsRead(k, f)
	}
}
