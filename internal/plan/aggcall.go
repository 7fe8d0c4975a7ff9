package plan

import "strings"

// String renders the call as EXPLAIN shows it: "sum(t.a)",
// "count(DISTINCT t.b) FILTER (WHERE ...)",
// "percentile_cont(0.5) WITHIN GROUP (ORDER BY t.x DESC)".
func (c AggCall) String() string {
	var b strings.Builder
	b.WriteString(c.Func + "(")
	switch {
	case c.OrderedSet():
		for i, d := range c.Direct {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.String())
		}
		b.WriteString(") WITHIN GROUP (" + strings.TrimPrefix(c.ExtrasString(), " "))
	case c.Arg == nil:
		b.WriteString("*")
	default:
		if c.Distinct {
			b.WriteString("DISTINCT ")
		}
		b.WriteString(c.Arg.String() + c.ExtrasString())
	}
	b.WriteString(")")
	if c.Filter != nil {
		b.WriteString(" FILTER (WHERE " + c.Filter.String() + ")")
	}
	return b.String()
}

// ExtrasString renders the arguments of an aggregate call after the first
// and its ORDER BY, as they follow the first argument in EXPLAIN:
// ", ','::text ORDER BY t.b DESC".
func (c AggCall) ExtrasString() string {
	var b strings.Builder
	for _, e := range c.More {
		b.WriteString(", " + e.String())
	}
	for i, k := range c.Order {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(k.Expr.String())
		if k.Desc {
			b.WriteString(" DESC")
		}
		if k.NullsFirst != k.Desc {
			if k.NullsFirst {
				b.WriteString(" NULLS FIRST")
			} else {
				b.WriteString(" NULLS LAST")
			}
		}
	}
	return b.String()
}
