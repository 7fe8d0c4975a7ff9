package plan

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/internal/types"
)

// FrameMode is how a window frame's bounds count: by rows, by peer
// groups, or (RANGE) by the values of the ORDER BY key, where a row's
// peers (the rows equal to it on every ORDER BY key) are always in or out
// together.
type FrameMode uint8

// Frame modes.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

// BoundKind is the kind of a frame bound.
type BoundKind uint8

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a window frame. For OffsetPreceding and
// OffsetFollowing, Offset counts rows (ROWS) or peer groups (GROUPS) and is
// non-negative; in RANGE mode Value is the distance from the current row's
// ORDER BY value instead (of the key's type, or an interval for dates,
// timestamps and intervals), also non-negative.
type FrameBound struct {
	Kind   BoundKind
	Offset int64
	Value  types.Value
	// ValueType is Value's type, for display.
	ValueType types.Type
}

// FrameExclusion is a frame's EXCLUDE option.
type FrameExclusion uint8

// Frame exclusions.
const (
	ExcludeNoOthers FrameExclusion = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// Frame is a window frame. The default, RANGE BETWEEN UNBOUNDED PRECEDING
// AND CURRENT ROW, reaches from the partition's first row to the current
// row's last peer.
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
	Exclude    FrameExclusion
	// Zone is the session time zone a RANGE offset moves a timestamptz
	// in (days and months on the wall clock); the zero Zone is UTC.
	Zone types.Zone
}

// DefaultFrame is the frame of a window that does not name one.
var DefaultFrame = Frame{Mode: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

// WindowFunc is one window function call: a ranking or value function
// (row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag,
// lead, first_value, last_value, nth_value) or an aggregate (count, sum,
// avg, min, max, bool_and, bool_or) over the frame.
type WindowFunc struct {
	// Func is the lower-case function name (every is bool_and).
	Func string
	// Args are evaluated over the input row. count(*) has none. lag and
	// lead have their value, offset and default (converted to the result
	// type) as Args[0..2], always three; nth_value its value and n.
	Args []Expr
	// Filter is an aggregate's FILTER (WHERE ...) predicate, or nil.
	Filter Expr
	Frame  Frame
	Type   types.Type
}

// Window computes window functions over the partitions of its input (the
// rows with equal PartitionBy values, NULL equal to NULL), each ordered by
// OrderBy. Its output is every input row followed by one column per
// function. Rows that OrderBy does not order (peers) come in an order SQL
// leaves open; Window orders them by their whole row, so functions that
// see the order of peers (row_number, a ROWS frame) are functions of the
// input.
type Window struct {
	Input       Node
	PartitionBy []Expr
	OrderBy     []SortKey
	Funcs       []WindowFunc
	Cols        []Column
}

func (n *Window) Columns() []Column { return n.Cols }
func (n *Window) Inputs() []Node    { return []Node{n.Input} }

// String renders the call for plans and EXPLAIN, with its frame when the
// function uses one and it is not the default.
func (f *WindowFunc) String() string {
	var b strings.Builder
	b.WriteString(f.Func + "(")
	switch {
	case len(f.Args) == 0 && f.Func == "count":
		b.WriteString("*")
	default:
		for i, a := range f.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.String())
		}
	}
	b.WriteString(")")
	if f.Filter != nil {
		b.WriteString(" FILTER (WHERE " + f.Filter.String() + ")")
	}
	if f.UsesFrame() && f.Frame != DefaultFrame {
		b.WriteString(" " + f.Frame.String())
	}
	return b.String()
}

// UsesFrame reports whether the function's result depends on its frame:
// aggregates and first_value, last_value and nth_value do; the ranking
// functions, lag and lead do not.
func (f *WindowFunc) UsesFrame() bool {
	switch f.Func {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead":
		return false
	}
	return true
}

// String renders the frame in SQL.
func (fr Frame) String() string {
	mode := [...]string{"RANGE", "ROWS", "GROUPS"}[fr.Mode]
	s := fmt.Sprintf("%s BETWEEN %s AND %s", mode, fr.Start, fr.End)
	switch fr.Exclude {
	case ExcludeCurrentRow:
		s += " EXCLUDE CURRENT ROW"
	case ExcludeGroup:
		s += " EXCLUDE GROUP"
	case ExcludeTies:
		s += " EXCLUDE TIES"
	}
	return s
}

// String renders the bound in SQL.
func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return b.offsetString() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return b.offsetString() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

func (b FrameBound) offsetString() string {
	if b.ValueType.ID == types.Unknown {
		return fmt.Sprint(b.Offset)
	}
	c := Const{Val: b.Value, Typ: b.ValueType}
	return c.String()
}
