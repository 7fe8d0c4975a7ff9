package plan

import "github.com/rockstream/rockstream/internal/types"

// Column is one output column of a plan node.
type Column struct {
	Name string
	Type types.Type
}

// Node is a relational operator.
type Node interface {
	// Columns returns the node's output columns.
	Columns() []Column
	// Inputs returns the node's input nodes, left to right.
	Inputs() []Node
}

// Scan reads a stored relation: a table or a materialized view.
type Scan struct {
	// Relation is the stored relation's name, as the catalog knows it.
	Relation string
	Cols     []Column
	// AppendOnly says the relation only ever grows: every change to it
	// is an insertion (an append-only table).
	AppendOnly bool
	// Unique says no two rows of the relation are ever equal (a table
	// with a primary key, all of whose columns Cols holds).
	Unique bool
}

// Values is a constant relation (VALUES lists, SELECT without FROM).
type Values struct {
	Rows [][]Expr // each expression is constant (no ColRef)
	Cols []Column
}

// Filter keeps the rows for which Pred is true (not false, not NULL).
type Filter struct {
	Input Node
	Pred  Expr
}

// Project computes one expression per output column from each input row.
type Project struct {
	Input Node
	Exprs []Expr
	Cols  []Column
}

// JoinKind is the kind of a join.
type JoinKind uint8

// Join kinds.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin
	AntiJoin
	MarkJoin
)

// Join combines Left and Right. A pair matches when every LeftKeys[i]
// equals RightKeys[i] (NULL never equals, unless NullSafe[i], which is IS
// NOT DISTINCT FROM) and Residual, evaluated over the concatenated row, is
// true. LeftKeys are evaluated over Left's row and RightKeys over Right's;
// each pair has the same type.
//
// InnerJoin returns the matching pairs (Left's columns, then Right's).
// LeftJoin adds every Left row without a match, its Right columns NULL;
// RightJoin the mirror; FullJoin both. Residual decides matching, it does
// not filter the preserved side.
//
// SemiJoin, AntiJoin and MarkJoin test each Left row against its matching
// Right rows (the rows of a decorrelated subquery) and compute its mark:
// with no Test, TRUE when it has a match and FALSE otherwise (EXISTS);
// with a Test (the comparison of x op ANY (subquery), over the
// concatenated row), TRUE when Test is true for some match, else NULL when
// it is NULL for some match, else FALSE. SemiJoin returns the Left rows
// whose mark is TRUE, AntiJoin those whose mark is FALSE (both with Left's
// columns only), MarkJoin every Left row followed by its mark as a boolean
// column.
type Join struct {
	Kind      JoinKind
	Left      Node
	Right     Node
	LeftKeys  []Expr
	RightKeys []Expr
	NullSafe  []bool
	Residual  Expr // nil when none
	// Test is the ANY comparison of a SemiJoin, AntiJoin or MarkJoin; nil
	// for EXISTS and for the other kinds.
	Test Expr
	// SingleMatch, on a LeftJoin, makes a Left row with more than one
	// match (counting duplicates) fail with 21000: Right is a scalar
	// subquery, which may return at most one row for each Left row.
	SingleMatch bool
	Cols        []Column
}

// AggCall is one aggregate function call.
type AggCall struct {
	// Func is the lower-case aggregate name: count, sum, avg, min, max,
	// bool_and, bool_or, bit_and, bit_or, bit_xor, string_agg, array_agg,
	// var_samp, var_pop, stddev_samp, stddev_pop, or one of the
	// ordered-set aggregates percentile_cont, percentile_disc and mode,
	// or the hypothetical-set ones rank, dense_rank, percent_rank and
	// cume_dist (only ever written with WITHIN GROUP).
	Func string
	// Arg is the argument, evaluated over the input row; nil for count(*).
	Arg Expr
	// More are the arguments after the first (string_agg's delimiter).
	More []Expr
	// Order is the ORDER BY inside the call, for the aggregates whose
	// result depends on the order of their input (string_agg); it is
	// dropped for the others.
	Order    []SortKey
	Distinct bool
	// Filter is the FILTER (WHERE ...) predicate over the input row, or nil.
	Filter Expr
	Type   types.Type
	// Direct are an ordered-set aggregate's direct arguments: the
	// fraction of percentile_cont and percentile_disc (double precision
	// or double precision[]), the hypothetical row of rank, dense_rank,
	// percent_rank and cume_dist (one value per ORDER BY key, of its
	// type). They are constant per group: expressions over the group's
	// values, ColRef i being GroupBy[i], not over the input row. For an
	// ordered-set aggregate, Order is the WITHIN GROUP (ORDER BY ...)
	// clause and Arg its first expression (the aggregated value of
	// percentile_cont, percentile_disc and mode, which have one).
	Direct []Expr
}

// OrderedSet reports whether the call is an ordered-set aggregate (written
// with WITHIN GROUP), hypothetical-set aggregates included.
func (c AggCall) OrderedSet() bool { return IsOrderedSet(c.Func) || c.Hypothetical() }

// Hypothetical reports whether the call is a hypothetical-set aggregate
// (rank, dense_rank, percent_rank, cume_dist WITHIN GROUP).
func (c AggCall) Hypothetical() bool { return IsHypothetical(c.Func) }

// IsOrderedSet reports whether fn names an ordered-set aggregate with one
// aggregated value the engine maintains.
func IsOrderedSet(fn string) bool {
	return fn == "percentile_cont" || fn == "percentile_disc" || fn == "mode"
}

// IsHypothetical reports whether fn names a hypothetical-set aggregate.
func IsHypothetical(fn string) bool {
	return fn == "rank" || fn == "dense_rank" || fn == "percent_rank" || fn == "cume_dist"
}

// Aggregate groups its input by GroupBy and computes Aggs per group. Its
// output columns are the group keys, in order, then one per aggregate. With
// no GroupBy it returns exactly one row, even over an empty input.
type Aggregate struct {
	Input   Node
	GroupBy []Expr
	Aggs    []AggCall
	Cols    []Column
}

// Distinct removes duplicate rows.
type Distinct struct {
	Input Node
}

// Union is UNION ALL of its inputs, which have the same column types.
// UNION (without ALL) is Distinct over a Union.
type Union struct {
	Ins  []Node
	Cols []Column
}

// SortKey is one ORDER BY item over the input's columns.
type SortKey struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

// Sort orders its input. It appears only at the top of an ad-hoc query
// (and under Limit); a maintained view is an unordered multiset.
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Limit returns at most Count rows (all when Count < 0) after skipping
// Offset, in its input's order.
type Limit struct {
	Input  Node
	Count  int64
	Offset int64
}

func (n *Scan) Columns() []Column      { return n.Cols }
func (n *Values) Columns() []Column    { return n.Cols }
func (n *Filter) Columns() []Column    { return n.Input.Columns() }
func (n *Project) Columns() []Column   { return n.Cols }
func (n *Join) Columns() []Column      { return n.Cols }
func (n *Aggregate) Columns() []Column { return n.Cols }
func (n *Distinct) Columns() []Column  { return n.Input.Columns() }
func (n *Union) Columns() []Column     { return n.Cols }
func (n *Sort) Columns() []Column      { return n.Input.Columns() }
func (n *Limit) Columns() []Column     { return n.Input.Columns() }

func (n *Scan) Inputs() []Node      { return nil }
func (n *Values) Inputs() []Node    { return nil }
func (n *Filter) Inputs() []Node    { return []Node{n.Input} }
func (n *Project) Inputs() []Node   { return []Node{n.Input} }
func (n *Join) Inputs() []Node      { return []Node{n.Left, n.Right} }
func (n *Aggregate) Inputs() []Node { return []Node{n.Input} }
func (n *Distinct) Inputs() []Node  { return []Node{n.Input} }
func (n *Union) Inputs() []Node     { return n.Ins }
func (n *Sort) Inputs() []Node      { return []Node{n.Input} }
func (n *Limit) Inputs() []Node     { return []Node{n.Input} }
