package plan

// SetOpKind is the kind of a SetOp.
type SetOpKind uint8

// Set operations other than UNION (which is Union, under Distinct without
// ALL).
const (
	Intersect SetOpKind = iota
	Except
)

// String returns the operation's SQL keyword.
func (k SetOpKind) String() string {
	if k == Except {
		return "EXCEPT"
	}
	return "INTERSECT"
}

// SetOp is INTERSECT [ALL] or EXCEPT [ALL] of Left and Right, which have
// the same column types. Rows are compared as DISTINCT compares them (NULL
// equals NULL). With ALL a row that appears wa times in Left and wb times
// in Right appears min(wa, wb) times in INTERSECT ALL and max(wa − wb, 0)
// times in EXCEPT ALL; without ALL it appears once when that count is
// positive.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

func (n *SetOp) Columns() []Column { return n.Cols }
func (n *SetOp) Inputs() []Node    { return []Node{n.Left, n.Right} }
