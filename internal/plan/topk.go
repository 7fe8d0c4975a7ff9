package plan

import "github.com/rockstream/rockstream/internal/types"

// TopK keeps, in each partition of its input (the rows with equal
// PartitionBy values, NULL equal to NULL; the whole input when there is no
// PartitionBy), the rows at positions Offset+1 to Offset+Count in the order
// of Keys. Count < 0 means no limit.
//
// SQL leaves the order of rows equal on every key open; TopK makes it
// total by ordering such rows by their whole row, column by column
// ascending with NULLs last, so its result is a function of its input.
//
// When RowNumber is true, the output has one more column after the
// input's: each row's position in its partition (bigint, from 1), which is
// the value ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) gives it
// under the same total order.
//
// TopK is what ORDER BY ... LIMIT/OFFSET is in a subquery or a
// materialized view, what DISTINCT ON keeps of each group, and what a
// filter on ROW_NUMBER() becomes.
type TopK struct {
	Input       Node
	PartitionBy []Expr
	Keys        []SortKey
	Count       int64
	Offset      int64
	RowNumber   bool
	Cols        []Column
}

func (n *TopK) Columns() []Column { return n.Cols }
func (n *TopK) Inputs() []Node    { return []Node{n.Input} }

// NewTopK returns a TopK over input whose output columns are input's (and
// a bigint column named rowNumber when rowNumber is not empty).
func NewTopK(input Node, partitionBy []Expr, keys []SortKey, count, offset int64, rowNumber string) *TopK {
	cols := append([]Column(nil), input.Columns()...)
	if rowNumber != "" {
		cols = append(cols, Column{Name: rowNumber, Type: types.Of(types.Int8)})
	}
	return &TopK{Input: input, PartitionBy: partitionBy, Keys: keys, Count: count, Offset: offset,
		RowNumber: rowNumber != "", Cols: cols}
}

// LimitAsTopK returns the TopK a Limit computes: over a Sort, the rows the
// Sort's order puts in the window; over anything else (LIMIT without ORDER
// BY, where SQL lets any rows be returned), the rows the whole-row order
// puts there.
func LimitAsTopK(l *Limit) *TopK {
	if s, ok := l.Input.(*Sort); ok {
		return NewTopK(s.Input, nil, s.Keys, l.Count, l.Offset, "")
	}
	return NewTopK(l.Input, nil, nil, l.Count, l.Offset, "")
}
