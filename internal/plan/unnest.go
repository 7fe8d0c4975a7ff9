package plan

// Unnest is unnest(array) over each input row: one output row per element
// of Array (evaluated over the input row), the input's columns followed by
// the element and, WithOrdinality, its 1-based position (bigint). A NULL
// or empty array gives no rows. It is a flat map, so it is linear: the
// delta of its output is the Unnest of the delta of its input.
//
// It is both unnest in FROM (FROM t, unnest(t.a), whose row is t's
// columns and the element's) and unnest in a select list (whose element
// column replaces the call).
//
// Outer is LEFT JOIN LATERAL unnest(...) ON On: the elements whose row
// satisfies On (nil: all) are the input row's matches, and an input row
// with none gives one row whose unnest columns are NULL. It is still a
// flat map of each input row on its own.
type Unnest struct {
	Input          Node
	Array          Expr
	WithOrdinality bool
	Outer          bool
	On             Expr // over Cols; nil for no condition
	Cols           []Column
}

func (n *Unnest) Columns() []Column { return n.Cols }
func (n *Unnest) Inputs() []Node    { return []Node{n.Input} }
