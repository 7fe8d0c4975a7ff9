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
}

// Catalog resolves relation names (lower-cased, unqualified or
// "public."-qualified) for the binder.
type Catalog interface {
	// Relation returns the named relation, or nil when there is none.
	Relation(name string) *Relation
}
