package plan

// Recursive is a WITH RECURSIVE query: the least fixpoint of
//
//	r = Base ∪ Step(r)
//
// where Step reads r through exactly one WorkingTable node with the same
// ID. With Distinct (UNION) r is a set: each row once, however many times
// it is derived. Without it (UNION ALL) r is the multiset
// Base + Step(Base) + Step(Step(Base)) + ..., PostgreSQL's iteration over
// a working table, which is finite only when the data makes it so.
//
// Base and Step have the same column types, which are Cols' types; the
// binder has converted Step's output where needed.
type Recursive struct {
	// Name is the WITH query's name, for messages and EXPLAIN.
	Name string
	// ID pairs the node with the WorkingTable in Step that reads it.
	ID       int
	Base     Node
	Step     Node
	Distinct bool
	Cols     []Column
	// MaxIterations bounds the iterations of one maintenance step (or of
	// a batch evaluation); 0 means the default.
	MaxIterations int
}

// WorkingTable is the recursive reference inside the Step of the
// Recursive node with the same ID: the rows derived so far.
type WorkingTable struct {
	Name string
	ID   int
	Cols []Column
}

func (n *Recursive) Columns() []Column    { return n.Cols }
func (n *WorkingTable) Columns() []Column { return n.Cols }

func (n *Recursive) Inputs() []Node    { return []Node{n.Base, n.Step} }
func (n *WorkingTable) Inputs() []Node { return nil }
