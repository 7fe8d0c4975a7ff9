package diff

import "github.com/rockstream/rockstream/internal/plan"

// setRows reports whether every row p's output ever holds has weight 1:
// p reads a relation whose rows are never equal (plan.Scan.Unique: a
// table with a primary key) through filters only. An inner join over
// such an input writes its arrangement of it without reading it first
// (ops.Join.SetInputs). The answer errs on the side of false: a
// projection may make two rows equal, and the scans a recursive circuit
// builds for its working table and side inputs are never Unique.
func setRows(p plan.Node) bool {
	switch n := p.(type) {
	case *plan.Scan:
		return n.Unique
	case *plan.Filter:
		return setRows(n.Input)
	}
	return false
}
