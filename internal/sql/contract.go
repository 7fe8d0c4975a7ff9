// Package sql binds parsed SQL (pg_query's AST) against the catalog and
// builds logical plans (internal/plan).
package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/types"
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
}

// Catalog resolves relation names (lower-cased, unqualified or
// "public."-qualified) for the binder.
type Catalog interface {
	// Relation returns the named relation, or nil when there is none.
	Relation(name string) *Relation
}

// Binder binds statements against a catalog. Params, when set, supplies
// the values of $1..$n; ParamTypes their types (Unknown where not known;
// the binder fills in the types it infers).
type Binder struct {
	Cat        Catalog
	Params     *[]types.Value
	ParamTypes []types.Type
}

// Scope is the set of columns an expression may refer to.
type Scope struct {
	// fields are the binder's
}

// Query binds a SelectStmt node (SELECT, VALUES, set operations) into a
// plan whose Columns() carry the output names PostgreSQL would give
// (?column? for unnamed expressions). ORDER BY/LIMIT/OFFSET become Sort and
// Limit at the top of the plan. Anything outside the supported set fails
// with 0A000 naming the construct.
func (b *Binder) Query(stmt *pg.Node) (plan.Node, error) { panic("not yet implemented") }

// TableScope returns a scope exposing one relation's columns under name
// (and alias, when not empty), for UPDATE, DELETE and RETURNING.
func (b *Binder) TableScope(name, alias string, cols []plan.Column) *Scope {
	panic("not yet implemented")
}

// Scalar binds a scalar expression over sc (nil: no columns, as in VALUES
// or DEFAULT). Aggregates and subqueries fail with a clear error.
func (b *Binder) Scalar(sc *Scope, n *pg.Node) (plan.Expr, error) { panic("not yet implemented") }

// Coerce converts e to type to by assignment rules (as INSERT and UPDATE
// store values): Unknown literals are parsed as to; other types need an
// assignment or implicit cast, else 42804 naming column.
func Coerce(e plan.Expr, to types.Type, column string) (plan.Expr, error) {
	panic("not yet implemented")
}
