package runtime

import (
	"context"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/connectors/spec"
	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// object is one catalog entry: a table, a materialized view or a view.
type object struct {
	id   uint64
	name string
	kind sql.RelationKind
	cols []plan.Column

	// Tables.
	notNull  []bool
	defaults []plan.Expr // nil entry: DEFAULT NULL
	pk       []int       // primary-key column indexes; empty when none
	lateness *lateness   // the event-time declaration; nil when none

	// appendOnly tables take only inserts (docs/sql.md, "Append-only
	// tables"); without a primary key, their rows are stored in
	// arrival order (appendonly.go).
	appendOnly bool
	// attnums are the columns' numbers, stable across ALTER TABLE (nil:
	// 1..n), dropped the numbers of dropped columns, and nextAttnum the
	// number a new column gets (0: len(cols)+1); alters are the ALTER
	// statements applied since CREATE TABLE, which start-up replays
	// (alter.go).
	attnums, dropped []int
	nextAttnum       int
	alters           []string
	// unstored append-only tables keep no rows (materialized = false,
	// unstored.go).
	unstored bool

	// Views and materialized views.
	sqlText string   // the defining SELECT, as written
	query   *pg.Node // the defining SELECT, parsed
	circuit *diff.Circuit
	deps    []string // relations the definition names directly
	// funcDeps are the signatures of the SQL functions the definition
	// calls (functions.go).
	funcDeps []string
	// funcPath is the search path the definition was bound in when it
	// calls a function outside public (funcPathOf), kept so that
	// recovery resolves its calls as its creation did; nil otherwise.
	funcPath []string
	// inputs are the relations the definition resolved, as it saw them
	// (inputs.go); nil for a view defined before they were kept.
	inputs map[string]*inputImage
	// maxIterations is the iteration limit of the view's recursive
	// queries; 0 means the default (recursion.go).
	maxIterations int
	// zone is the session time zone a materialized view's query is
	// bound in: its creating session's (zone.go).
	zone types.Zone
	// route, for a materialized view, is how many of its leading
	// columns are the routing key of its stored rows (keys.go); 0 means
	// all of them. derivedRoute is the routing its plan gets now
	// (groupRoute), which the upgrade of a store from layout 1 adopts.
	route, derivedRoute int
	// created is the epoch that created a materialized view, the first
	// it can be read AS OF; 0 when not known (a view created before
	// catalog records kept it).
	created uint64

	// system, for a system relation, computes its rows (system.go);
	// systemCols is how many of its last columns are system columns.
	system     func(r state.Reader) (zset.Batch, error)
	systemCols int
}

// parallelism is how the catalog's circuits step and its relations are
// read: on the engine's workers, or on one without an engine.
func (c *catalog) parallelism() diff.Parallelism {
	if c.eng == nil {
		return diff.Parallelism{Workers: 1}
	}
	return c.eng.parallelism()
}

// parallelism is how the engine's circuits step and its relations are
// read: on Options.Workers, for work of Options.ParallelMinRows rows and
// more.
func (e *Engine) parallelism() diff.Parallelism {
	return diff.Parallelism{Workers: e.opts.Workers, MinRows: e.opts.ParallelMinRows}
}

// rowsPrefix is where the object's rows are stored.
func (o *object) rowsPrefix() []byte {
	if o.kind == sql.Table {
		return relPrefix(nsTableRows, o.id)
	}
	return relPrefix(nsViewRows, o.id)
}

// keyOf returns the function that computes a stored row's key: prefix,
// the bucket of the routing key (the primary key, else the whole row),
// then the rest (keys.go).
func (o *object) keyOf() func(dst, prefix []byte, row zset.Row) []byte {
	if len(o.pk) == 0 {
		if k := o.route; k > 0 && k < len(o.cols) {
			return func(dst, prefix []byte, row zset.Row) []byte { return routedRowKey(dst, prefix, row, k) }
		}
		return rowKey
	}
	pk := o.pk
	return func(dst, prefix []byte, row zset.Row) []byte {
		dst = append(append(dst[:0], prefix...), 0)
		for _, i := range pk {
			dst = zset.EncodeKey(dst, row[i])
		}
		dst[len(prefix)] = byte(zset.Bucket(dst[len(prefix)+1:]))
		return dst
	}
}

// orderKeyOf returns the function that computes a stored row's order
// key: its key without the bucket, which orders the relation's rows.
func (o *object) orderKeyOf() func(dst, prefix []byte, row zset.Row) []byte {
	if len(o.pk) == 0 {
		return rowOrderKey
	}
	pk := o.pk
	return func(dst, prefix []byte, row zset.Row) []byte {
		dst = append(dst[:0], prefix...)
		for _, i := range pk {
			dst = zset.EncodeKey(dst, row[i])
		}
		return dst
	}
}

func (o *object) kindName() string {
	switch o.kind {
	case sql.Table:
		return "table"
	case sql.MaterializedView:
		return "materialized view"
	}
	return "view"
}

// catalog is the set of named objects. It is copied on write: a DDL
// statement builds a new catalog and installs it on commit, so readers
// holding the old one are never disturbed.
type catalog struct {
	byName map[string]*object
	nextID uint64
	// revision counts catalog changes; it only grows, and every DDL that
	// commits advances it by one.
	revision uint64
	// eng is the engine the catalog belongs to, whose sessions and
	// frontier system relations show (system_observe.go); nil while the
	// catalog is recovered.
	eng *Engine
	// sharded is set in a shard-mode engine's catalogs, recovered ones
	// too, whose views are built without lookup joins (shard.go).
	sharded bool

	// pg, in the copy of the catalog one session's query binds against
	// (withSession), is the system catalog that session sees; nil
	// otherwise (systemcatalog.go).
	pg     *pgcatalog.Catalog
	reader state.Reader
	// ctx is the statement's context in that copy: per-row subqueries
	// stop when it ends.
	ctx context.Context
	// connectors are the sources and sinks, by name (connector.go).
	connectors map[string]*spec.Spec
	// indexes are the secondary indexes, by name (index.go).
	indexes map[string]*index
	// statusOf reports a connector's status; nil when nothing runs them.
	statusOf func(name string) (ConnectorStatus, bool)
	// functions are the SQL functions by name, each name's overloads
	// (functions.go).
	functions map[string][]*function
	// schemas are the schemas made with CREATE SCHEMA, by name; path,
	// in the copy of the catalog a session's statement uses, is that
	// session's search path (schemas.go), nil elsewhere.
	schemas map[string]*schema
	path    []string
	// origin, in a copy made by withPath, is the catalog copied;
	// database, in a session's copy, is the session's database.
	origin   *catalog
	database string
}

func newCatalog() *catalog {
	return &catalog{byName: map[string]*object{}, nextID: 1, indexes: map[string]*index{}, schemas: map[string]*schema{}}
}

func (c *catalog) clone() *catalog {
	n := &catalog{byName: make(map[string]*object, len(c.byName)), nextID: c.nextID, revision: c.revision + 1, eng: c.eng, sharded: c.sharded,
		connectors: make(map[string]*spec.Spec, len(c.connectors)), statusOf: c.statusOf}
	for k, v := range c.byName {
		n.byName[k] = v
	}
	for k, v := range c.connectors {
		n.connectors[k] = v
	}
	c.cloneFunctions(n)
	n.schemas = make(map[string]*schema, len(c.schemas))
	for k, v := range c.schemas {
		n.schemas[k] = v
	}
	n.indexes = make(map[string]*index, len(c.indexes))
	for k, v := range c.indexes {
		n.indexes[k] = v
	}
	return n
}

// normalizeName lower-cases nothing (pg_query already folds unquoted
// identifiers) but strips the public schema.
func normalizeName(schema, name string) string {
	if schema == "" || schema == "public" {
		return name
	}
	return schema + "." + name
}

func (c *catalog) lookup(name string) *object {
	if o := c.pgRelationObject(name); o != nil {
		return o
	}
	if o := c.byName[strings.TrimPrefix(name, "public.")]; o != nil {
		return o
	}
	return c.systemRelation(name)
}

// Relation implements sql.Catalog: name is as a user wrote it,
// resolved through the search path (schemas.go).
func (c *catalog) Relation(name string) *sql.Relation {
	o := c.resolve(name)
	if o == nil {
		return nil
	}
	return c.relationOf(o)
}

// matviewsInOrder returns the materialized views in creation (= dependency)
// order.
func (c *catalog) matviewsInOrder() []*object {
	var out []*object
	for _, o := range c.byName {
		if o.kind == sql.MaterializedView {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// dependents returns the objects whose definitions name o directly.
func (c *catalog) dependents(name string) []*object {
	var out []*object
	target := c.byName[name]
	if target == nil {
		return nil
	}
	for _, o := range c.byName {
		if o != target && o.readsRelation(target.id, name) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
