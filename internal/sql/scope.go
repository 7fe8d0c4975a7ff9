package sql

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
)

// Scope is the set of columns an expression may refer to: the name space
// of a FROM clause (or of one table, for UPDATE, DELETE and RETURNING).
//
// A scope is a list of items, one per range-table entry as PostgreSQL
// keeps them: a table, view or subquery under its alias, and for every JOIN
// an item holding the join's own columns (the merged USING columns first).
// An item may be visible by relation name (for t.x and t.*), by column name
// (for unqualified x and *), or both. Every column is an expression over
// the row of the FROM clause's plan: a column reference, or for the merged
// column of a FULL JOIN ... USING, a COALESCE of both sides.
type Scope struct {
	items []*nsItem
}

// nsItem is one entry of a Scope.
type nsItem struct {
	// name is the name the entry is referred to by: its alias, or the
	// relation's own name. Empty for an unaliased join.
	name string
	// hiddenName is the relation's own name when an alias hides it; used
	// only to explain a reference to the hidden name.
	hiddenName  string
	relVisible  bool
	colsVisible bool
	cols        []nsCol
}

// nsCol is one column of a scope item.
type nsCol struct {
	name string
	expr plan.Expr
	// system marks a system column (tableoid): * and NATURAL leave it
	// out.
	system bool
}

// emptyScope has no columns (VALUES, SELECT without FROM, DEFAULT).
var emptyScope = &Scope{}

// TableScope returns a scope exposing one relation's columns under name
// (and alias, when not empty), for UPDATE, DELETE and RETURNING. As in
// PostgreSQL, an alias hides the relation's own name. Column i of cols is
// column i of the row the bound expressions are evaluated over.
func (b *Binder) TableScope(name, alias string, cols []plan.Column) *Scope {
	item := &nsItem{name: name, relVisible: true, colsVisible: true}
	if alias != "" && alias != name {
		item.name, item.hiddenName = alias, name
	}
	for i, c := range cols {
		item.cols = append(item.cols, nsCol{
			name: c.Name,
			expr: &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type},
		})
	}
	return &Scope{items: []*nsItem{item}}
}

// relationItem returns the scope item of a relation (table, view,
// subquery) whose row starts at column 0, under refName, with the given
// output columns.
func relationItem(refName, hidden string, cols []plan.Column) *nsItem {
	item := &nsItem{name: refName, hiddenName: hidden, relVisible: true, colsVisible: true}
	for i, c := range cols {
		item.cols = append(item.cols, nsCol{
			name: c.Name,
			expr: &plan.ColRef{Index: i, Name: qualify(refName, c.Name), Typ: c.Type},
		})
	}
	return item
}

// qualify returns the display name of column col of relation rel.
func qualify(rel, col string) string {
	if rel == "" {
		return col
	}
	return rel + "." + col
}

// shifted returns a copy of item whose column expressions refer to a row
// in which the item's row starts at column delta.
func (it *nsItem) shifted(delta int) *nsItem {
	c := *it
	c.cols = shiftCols(it.cols, delta)
	return &c
}

func shiftCols(cols []nsCol, delta int) []nsCol {
	out := make([]nsCol, len(cols))
	for i, col := range cols {
		out[i] = nsCol{name: col.name, expr: shiftExpr(col.expr, delta), system: col.system}
	}
	return out
}

// lookupColumn resolves an unqualified column name: it must match exactly
// one column among the items visible by column name.
func (s *Scope) lookupColumn(name string, loc int32) (plan.Expr, error) {
	var found *nsCol
	for _, it := range s.items {
		if !it.colsVisible {
			continue
		}
		for i := range it.cols {
			if it.cols[i].name != name {
				continue
			}
			if found != nil {
				return nil, posErr(errs.Newf(errs.AmbiguousColumn, "column reference %q is ambiguous", name), loc)
			}
			found = &it.cols[i]
		}
	}
	if found == nil {
		// A bare relation name would be a whole-row reference.
		for _, it := range s.items {
			if it.relVisible && it.name == name {
				return nil, posErr(errs.Newf(errs.FeatureNotSupported,
					"whole-row reference to %q is not supported", name), loc)
			}
		}
		return nil, posErr(errs.Newf(errs.UndefinedColumn, "column %q does not exist", name), loc)
	}
	return found.expr, nil
}

// lookupRelation finds the item visible under relation name rel.
func (s *Scope) lookupRelation(rel string, loc int32) (*nsItem, error) {
	var found *nsItem
	for _, it := range s.items {
		if it.relVisible && it.name == rel {
			if found != nil {
				return nil, posErr(errs.Newf(errs.AmbiguousColumn, "table reference %q is ambiguous", rel), loc)
			}
			found = it
		}
	}
	if found != nil {
		return found, nil
	}
	for _, it := range s.items {
		if it.relVisible && it.hiddenName == rel {
			return nil, posErr(errs.Newf(errs.UndefinedTable,
				"invalid reference to FROM-clause entry for table %q", rel), loc)
		}
	}
	return nil, posErr(errs.Newf(errs.UndefinedTable, "missing FROM-clause entry for table %q", rel), loc)
}

// lookupQualified resolves rel.name.
func (s *Scope) lookupQualified(rel, name string, loc int32) (plan.Expr, error) {
	it, err := s.lookupRelation(rel, loc)
	if err != nil {
		return nil, err
	}
	var found plan.Expr
	for _, c := range it.cols {
		if c.name != name {
			continue
		}
		if found != nil {
			return nil, posErr(errs.Newf(errs.AmbiguousColumn, "column reference %q is ambiguous", name), loc)
		}
		found = c.expr
	}
	if found == nil {
		return nil, posErr(errs.Newf(errs.UndefinedColumn, "column %s.%s does not exist", rel, name), loc)
	}
	return found, nil
}

// star returns the columns * expands to: every column of every item
// visible by column name, in order.
func (s *Scope) star() []nsCol {
	var out []nsCol
	for _, it := range s.items {
		if it.colsVisible {
			for _, c := range it.cols {
				if !c.system {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// hasRelations reports whether any item is visible at all (for the
// "SELECT * with no tables" check).
func (s *Scope) hasRelations() bool {
	for _, it := range s.items {
		if it.colsVisible {
			return true
		}
	}
	return false
}

// checkConflicts fails when two items of a FROM list are visible under the
// same relation name.
func checkConflicts(a, b []*nsItem, loc int32) error {
	for _, x := range a {
		if !x.relVisible {
			continue
		}
		for _, y := range b {
			if y.relVisible && x.name == y.name {
				return posErr(errs.Newf(errs.DuplicateAlias,
					"table name %q specified more than once", x.name), loc)
			}
		}
	}
	return nil
}
