package runtime

import (
	"context"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/types"
)

// A prepared SELECT (the extended protocol's Parse once and Bind/Execute
// many times, SQL PREPARE and EXECUTE, the embedded API's Prepare) keeps
// its bound plan, and the circuit built from it, between executions: an
// execution copies its parameter values into the slice the plan's
// parameters read and runs the kept plan. Nothing of the statement is
// parsed, walked or bound again.
//
// Invariants:
//   - The plan is used only where binding again would give the same plan
//     (selectKey): against the same *catalog (any DDL commits a new one),
//     in the same session, with the same time zone, session user, role and
//     search_path. Anything else binds again and keeps the new plan.
//   - The kept plan reads nothing at run time that binding fixed, but its
//     parameters' values: a plan that bound the statement's clock (now()),
//     a system function, an OID alias name lookup or a per-row subquery
//     (sql.Binder.UsedClock, UsedSession), or that reads a system relation,
//     is not kept; nor is a statement whose binding reads a parameter's
//     value (LIMIT $1, OFFSET $1, a window frame's offset, a time window's
//     size: see selectCacheable).
//   - Privileges are not part of the binding: dispatch checks them on
//     every execution, before the plan runs.
//   - A Prepared belongs to one session, which runs one statement at a
//     time: the kept parameter slice and circuit are used by one
//     execution at a time.

// selectCache keeps a prepared SELECT's binding between its executions.
type selectCache struct {
	// stmt is the prepared statement's node, whose executions this cache
	// serves (statementParams.keptSelect).
	stmt *pg.Node
	key  selectKey
	// Set by the last kept binding; nil when none is kept.
	b *sql.Binder
	p plan.Node
	// circuits are the circuits runQuery built for the plan's nodes,
	// kept with the plan.
	circuits *keptCircuits
}

// selectKey is what a binding of a SELECT depends on besides the
// statement's text.
type selectKey struct {
	cat                    *catalog
	sess                   *Session
	zone                   string
	user, role, searchPath string
}

// newSelectCache returns the cache of a prepared statement that is a
// SELECT whose binding can be kept (selectCacheable); nil for any other.
func newSelectCache(st *Statement) *selectCache {
	if st.err != nil || st.tree == nil || len(st.tree.Stmts) != 1 || st.ext.Kind != ext.None {
		return nil
	}
	n := st.tree.Stmts[0].Stmt
	if sel := n.GetSelectStmt(); sel == nil || sel.IntoClause != nil || !selectCacheable(sel) {
		return nil
	}
	return &selectCache{stmt: n}
}

// selectCacheable reports whether binding sel reads no parameter's value:
// parameters appear nowhere the binder evaluates them (LIMIT and OFFSET,
// window frames and the filters on window results that become a top-k,
// table functions such as the time windows' sizes).
func selectCacheable(sel *pg.SelectStmt) bool {
	ok := true
	pgWalk(sel, func(x any) {
		if !ok {
			return
		}
		switch n := x.(type) {
		case *pg.SelectStmt:
			if maxParamRef(n.LimitCount) > 0 || maxParamRef(n.LimitOffset) > 0 {
				ok = false
			}
		case *pg.WindowDef:
			ok = false
		case *pg.RangeFunction:
			if maxParamRef(n) > 0 {
				ok = false
			}
		}
	})
	return ok
}

// selectKeyOf returns the key of a binding by s against cat now.
func (s *Session) selectKeyOf(cat *catalog, zone types.Zone) selectKey {
	return selectKey{cat: cat, sess: s, zone: zone.Name(), user: s.sessionUser(),
		role: s.setRole(), searchPath: s.resolved().searchPath}
}

// kept returns the kept plan and binder when they were bound under key,
// with the execution's parameter values copied into the binder's.
func (c *selectCache) kept(key selectKey, values []types.Value) (*sql.Binder, plan.Node, bool) {
	if c == nil || c.p == nil || c.key != key {
		return nil, nil, false
	}
	copy(*c.b.Params, values)
	return c.b, c.p, true
}

// keep keeps b's plan p, bound under key, when it may be kept; it drops
// what was kept before either way.
func (c *selectCache) keep(key selectKey, b *sql.Binder, p plan.Node, cat *catalog) {
	c.b, c.p, c.circuits = nil, nil, nil
	if b.UsedClock || b.UsedSession || !readsUserRelations(cat, p) {
		return
	}
	c.key, c.b, c.p, c.circuits = key, b, p, &keptCircuits{m: map[plan.Node]*diff.Circuit{}}
}

// readsUserRelations reports whether every relation p scans is a table
// or materialized view of cat (no system relation, whose rows are the
// session's and the moment's).
func readsUserRelations(cat *catalog, p plan.Node) bool {
	if sc, ok := p.(*plan.Scan); ok {
		o, _ := cat.input(sc.Relation)
		if o == nil || o.system != nil {
			return false
		}
	}
	for _, in := range p.Inputs() {
		if !readsUserRelations(cat, in) {
			return false
		}
	}
	return true
}

// keptSelect returns the cache of the prepared SELECT n, nil when n is
// not one (p may be nil).
func (p *statementParams) keptSelect(n *pg.Node) *selectCache {
	if p == nil || p.sel == nil || p.sel.stmt != n {
		return nil
	}
	return p.sel
}

// keptCircuits are the circuits built for a kept plan's nodes, by node.
// A circuit keeps nothing of one run for the next (its operators' state
// is in the store each run gets: queryState), so a run of the same node
// may step the same circuit.
//
// The key conditions of a node's scans of a relation (scansConds) are
// kept with them: they depend on the plan and on the relation's
// columns and key (its *object, which a DDL commit replaces), not on
// the parameters' values, which a condition's arguments read when the
// key ranges are computed from them at each execution.
type keptCircuits struct {
	mu    sync.Mutex
	m     map[plan.Node]*diff.Circuit
	conds map[plan.Node]keptConds
}

// keptConds are the key conditions of a plan's scans of relation o.
type keptConds struct {
	o     *object
	scans [][]keyCond
}

type keptCircuitsKey struct{}

// withKeptCircuits returns ctx under which queryCircuit keeps the
// circuits it builds in k.
func withKeptCircuits(ctx context.Context, k *keptCircuits) context.Context {
	return context.WithValue(ctx, keptCircuitsKey{}, k)
}

// keptScanConds returns the key conditions of p's scans of o
// (scansConds of scanUses), the ones kept for p and o under ctx when ctx
// keeps them.
func keptScanConds(ctx context.Context, p plan.Node, o *object) [][]keyCond {
	k, _ := ctx.Value(keptCircuitsKey{}).(*keptCircuits)
	if k == nil {
		return scansConds(o, scanUses(p)[o.name])
	}
	k.mu.Lock()
	kc, ok := k.conds[p]
	k.mu.Unlock()
	if ok && kc.o == o {
		return kc.scans
	}
	scans := scansConds(o, scanUses(p)[o.name])
	k.mu.Lock()
	if k.conds == nil {
		k.conds = map[plan.Node]keptConds{}
	}
	k.conds[p] = keptConds{o: o, scans: scans}
	k.mu.Unlock()
	return scans
}

// queryCircuit returns the circuit of an ad-hoc query's plan p: the one
// kept for p under ctx, or a new one (kept there when ctx keeps them).
func queryCircuit(ctx context.Context, p plan.Node) (*diff.Circuit, error) {
	k, _ := ctx.Value(keptCircuitsKey{}).(*keptCircuits)
	if k != nil {
		k.mu.Lock()
		c := k.m[p]
		k.mu.Unlock()
		if c != nil {
			return c, nil
		}
	}
	c, err := diff.Build(p, []byte{nsQuery}, true)
	if err == nil && k != nil {
		k.mu.Lock()
		k.m[p] = c
		k.mu.Unlock()
	}
	return c, err
}
