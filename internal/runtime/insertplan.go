package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/types"
)

// A prepared INSERT of rows of parameters and literals,
//
//	INSERT INTO t [(cols)] VALUES ($1, $2, 'x'), ($3, DEFAULT, $4)
//
// is bound once and run many times, each time with other parameter
// values: its binding (the target columns, one expression per value
// assigning it to its column, with PostgreSQL's assignment casts and
// their range checks) is kept between executions, and an execution only
// evaluates those expressions over its values. Nothing of the statement
// is parsed, walked or bound again.
//
// Invariants:
//   - The binding is used only against the catalog it was bound against
//     (the same *catalog and the same *object for the table): any DDL
//     commits a new catalog, and the next execution binds again. A
//     binding that failed is not kept.
//   - The kept shape reads nothing but its parameters (no subquery, no
//     function call, no ON CONFLICT, RETURNING or WITH), so evaluating the
//     kept expressions again is what binding them again would give.
//     DEFAULTs are evaluated per execution, as before.
//   - A Prepared belongs to one session, which runs one statement at a
//     time: the kept binder's parameter slice is written by the execution
//     that reads it.

// insertCache keeps a prepared INSERT's binding between its executions.
type insertCache struct {
	ins *pg.InsertStmt
	// Set by the last binding: the catalog and table it was bound
	// against.
	cat *catalog
	o   *object
	bi  *boundInsert
	// zone is the session time zone the binding read literals in.
	zone types.Zone
}

// newInsertCache returns the cache of a prepared statement that is an
// INSERT of VALUES rows of parameters, constants (cast or not) and
// DEFAULT; nil for any other statement.
func newInsertCache(st *Statement) *insertCache {
	if st.err != nil || st.tree == nil || len(st.tree.Stmts) != 1 {
		return nil
	}
	ins := st.tree.Stmts[0].Stmt.GetInsertStmt()
	if ins == nil || !plainValuesInsert(ins) {
		return nil
	}
	return &insertCache{ins: ins}
}

// plainValuesInsert reports whether ins is INSERT INTO t [(cols)] VALUES
// rows whose items are parameters, constants, casts of those, or
// DEFAULT, with no ON CONFLICT, RETURNING or WITH.
func plainValuesInsert(ins *pg.InsertStmt) bool {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || ins.OnConflictClause != nil || len(ins.ReturningList) > 0 || ins.WithClause != nil ||
		len(sel.ValuesLists) == 0 || sel.WithClause != nil || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.SortClause) > 0 {
		return false
	}
	for _, c := range ins.Cols {
		if len(c.GetResTarget().GetIndirection()) > 0 {
			return false
		}
	}
	for _, row := range sel.ValuesLists {
		for _, v := range row.GetList().GetItems() {
			if v.GetSetToDefault() != nil {
				continue
			}
			for v.GetTypeCast() != nil {
				v = v.GetTypeCast().Arg
			}
			if v.GetParamRef() == nil && v.GetAConst() == nil {
				return false
			}
		}
	}
	return true
}

// bound returns c's INSERT into o bound against cat, with the execution's
// parameter values: the kept binding when it was bound against the same
// catalog and table, else a new one, kept for the next execution.
func (c *insertCache) bound(cat *catalog, o *object, params *statementParams) (*boundInsert, error) {
	if c.bi != nil && sameBinding(c.cat, cat) && c.o == o && c.zone.Name() == params.zone.Name() {
		copy(*c.bi.b.Params, params.values)
		return c.bi, nil
	}
	c.cat, c.o, c.bi = nil, nil, nil
	bi, err := bindInsert(cat, o, c.ins, nil, params)
	if err != nil {
		return nil, err
	}
	c.cat, c.o, c.bi, c.zone = cat, o, bi, params.zone
	return bi, nil
}

// keptInsert returns the cache of the prepared INSERT ins, nil when ins
// is not one (p may be nil).
func (p *statementParams) keptInsert(ins *pg.InsertStmt) *insertCache {
	if p == nil || p.insert == nil || p.insert.ins != ins {
		return nil
	}
	return p.insert
}
