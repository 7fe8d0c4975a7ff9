package plan

import "strings"

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
