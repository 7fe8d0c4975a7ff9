package sql

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/plan"
)

// formatOrdered renders the line of a SetOp, TopK or Window node for
// FormatPlan; it reports false for other nodes.
func formatOrdered(b *strings.Builder, n plan.Node) bool {
	switch x := n.(type) {
	case *plan.SetOp:
		all := ""
		if x.All {
			all = " ALL"
		}
		fmt.Fprintf(b, "%s%s %s", x.Kind, all, formatCols(x.Cols))
	case *plan.TopK:
		b.WriteString("TopK")
		if len(x.PartitionBy) > 0 {
			fmt.Fprintf(b, " partition [%s]", joinExprs(x.PartitionBy))
		}
		fmt.Fprintf(b, " order [%s]", formatSortKeys(x.Keys))
		if x.Count >= 0 {
			fmt.Fprintf(b, " count=%d", x.Count)
		}
		if x.Offset > 0 {
			fmt.Fprintf(b, " offset=%d", x.Offset)
		}
		if x.RowNumber {
			fmt.Fprintf(b, " row_number %s", formatCols(x.Cols[len(x.Cols)-1:]))
		}
	case *plan.Window:
		b.WriteString("Window")
		if len(x.PartitionBy) > 0 {
			fmt.Fprintf(b, " partition [%s]", joinExprs(x.PartitionBy))
		}
		if len(x.OrderBy) > 0 {
			fmt.Fprintf(b, " order [%s]", formatSortKeys(x.OrderBy))
		}
		funcs := make([]string, len(x.Funcs))
		for i := range x.Funcs {
			funcs[i] = fmt.Sprintf("%s %s", x.Funcs[i].String(), x.Funcs[i].Type)
		}
		fmt.Fprintf(b, " funcs [%s]", strings.Join(funcs, ", "))
	default:
		return false
	}
	return true
}

func formatSortKeys(keys []plan.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		nulls := "NULLS LAST"
		if k.NullsFirst {
			nulls = "NULLS FIRST"
		}
		parts[i] = fmt.Sprintf("%s %s %s", k.Expr, dir, nulls)
	}
	return strings.Join(parts, ", ")
}
