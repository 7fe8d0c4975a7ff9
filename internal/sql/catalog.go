package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
)

// RelationKind is the kind of a named relation.
type RelationKind uint8

const (
	Table RelationKind = iota
	MaterializedView
	View // inline: expanded into its readers' plans
)

// Relation describes a named relation for binding.
type Relation struct {
	Name string
	Kind RelationKind
	Cols []plan.Column
	// Query is a View's defining SELECT, parsed; nil otherwise.
	Query *pg.Node
	// AppendOnly is set for a table that takes insertions only.
	AppendOnly bool
	// Unique is set for a relation no two of whose rows are ever equal
	// (a table with a primary key among Cols).
	Unique bool
	// SystemCols is how many of the last columns are system columns (a
	// system relation's tableoid): named by a query, left out of *.
	SystemCols int
	// Cat, when set, is the catalog a View's Query binds its names in
	// (the relations as the view saw them when it was defined); nil
	// binds them in the catalog of the statement reading the view.
	Cat Catalog
}

// Catalog resolves relation names (lower-cased, unqualified or
// "public."-qualified) for the binder.
type Catalog interface {
	// Relation returns the named relation, or nil when there is none.
	Relation(name string) *Relation
}
