package sql

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
)

// FormatPlan renders a logical plan as an indented tree, one node per
// line, children indented under their parent, with each node's columns
// (name and type) and expressions. It is what EXPLAIN shows of a bound
// query and what the binder's golden tests compare.
func FormatPlan(n plan.Node) string {
	var b strings.Builder
	formatNode(&b, n, 0)
	return b.String()
}

func formatNode(b *strings.Builder, n plan.Node, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	switch x := n.(type) {
	case *plan.Scan:
		fmt.Fprintf(b, "Scan %s %s", x.Relation, formatCols(x.Cols))
	case *plan.Values:
		rows := make([]string, len(x.Rows))
		for i, r := range x.Rows {
			rows[i] = "(" + joinExprs(r) + ")"
		}
		fmt.Fprintf(b, "Values %s %s", formatCols(x.Cols), strings.Join(rows, ", "))
	case *plan.Filter:
		fmt.Fprintf(b, "Filter %s", x.Pred)
	case *plan.Project:
		items := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			items[i] = fmt.Sprintf("%s %s := %s", x.Cols[i].Name, x.Cols[i].Type, e)
		}
		fmt.Fprintf(b, "Project [%s]", strings.Join(items, ", "))
	case *plan.Join:
		fmt.Fprintf(b, "Join %s", joinKindName(x.Kind))
		if len(x.LeftKeys) > 0 {
			keys := make([]string, len(x.LeftKeys))
			for i := range x.LeftKeys {
				op := "="
				if x.NullSafe[i] {
					op = "IS NOT DISTINCT FROM"
				}
				keys[i] = fmt.Sprintf("%s %s %s", x.LeftKeys[i], op, x.RightKeys[i])
			}
			fmt.Fprintf(b, " keys [%s]", strings.Join(keys, ", "))
		}
		if x.Residual != nil {
			fmt.Fprintf(b, " residual %s", x.Residual)
		}
		if x.Test != nil {
			fmt.Fprintf(b, " test %s", x.Test)
		}
		if x.SingleMatch {
			b.WriteString(" single-match")
		}
		fmt.Fprintf(b, " %s", formatCols(x.Cols))
	case *plan.Aggregate:
		aggs := make([]string, len(x.Aggs))
		for i, a := range x.Aggs {
			aggs[i] = fmt.Sprintf("%s %s", aggName(a), a.Type)
		}
		fmt.Fprintf(b, "Aggregate group [%s] aggs [%s]", joinExprs(x.GroupBy), strings.Join(aggs, ", "))
	case *plan.Distinct:
		b.WriteString("Distinct")
	case *plan.Union:
		fmt.Fprintf(b, "Union %s", formatCols(x.Cols))
	case *plan.Sort:
		keys := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			dir := "ASC"
			if k.Desc {
				dir = "DESC"
			}
			nulls := "NULLS LAST"
			if k.NullsFirst {
				nulls = "NULLS FIRST"
			}
			keys[i] = fmt.Sprintf("%s %s %s", k.Expr, dir, nulls)
		}
		fmt.Fprintf(b, "Sort [%s]", strings.Join(keys, ", "))
	case *plan.Limit:
		fmt.Fprintf(b, "Limit count=%d offset=%d", x.Count, x.Offset)
	case *plan.Recursive, *plan.WorkingTable, *plan.TimeWindow:
		b.WriteString(formatIterative(x))
	case *plan.Unnest:
		fmt.Fprintf(b, "Unnest %s ordinality=%v", x.Array, x.WithOrdinality)
		if x.Outer {
			fmt.Fprintf(b, " left on=%v", x.On)
		}
		fmt.Fprintf(b, " %s", formatCols(x.Cols))
	default:
		if !formatOrdered(b, n) {
			fmt.Fprintf(b, "%T", n)
		}
	}
	b.WriteString("\n")
	for _, in := range n.Inputs() {
		formatNode(b, in, depth+1)
	}
}

func formatCols(cols []plan.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.Type.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func joinExprs(es []plan.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

func joinKindName(k plan.JoinKind) string {
	switch k {
	case plan.InnerJoin:
		return "inner"
	case plan.LeftJoin:
		return "left"
	case plan.RightJoin:
		return "right"
	case plan.FullJoin:
		return "full"
	case plan.SemiJoin:
		return "semi"
	case plan.AntiJoin:
		return "anti"
	case plan.MarkJoin:
		return "mark"
	}
	return fmt.Sprintf("kind%d", k)
}
