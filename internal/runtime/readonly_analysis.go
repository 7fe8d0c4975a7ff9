package runtime

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

// readOnlyError is the error of write statement n (named name) in a
// read-only transaction. As in PostgreSQL, whose executor checks the
// transaction's mode only after parse analysis, an INSERT, UPDATE, DELETE
// or COPY FROM is bound first, without running: a missing relation or
// column, a wrong kind of relation or a type error is reported before
// 25006. Binding reads only the catalog, so nothing is written either way.
// Other statements (DDL, TRUNCATE) are refused at once, as PostgreSQL
// refuses utility commands before looking at their objects.
func (s *Session) readOnlyError(n *pg.Node, name string, paramText []*string) error {
	if err := s.analyzeWrite(n, paramText); err != nil {
		return err
	}
	return errs.Newf(errs.ReadOnlyTransaction, "cannot execute %s in a read-only transaction", name)
}

// analyzeWrite binds the DML statement n as its execution would and
// returns the binding's error; nil for statements it does not bind.
func (s *Session) analyzeWrite(n *pg.Node, paramText []*string) error {
	cat := s.catalog()
	cat = cat.withPath(s.searchPathOf(cat))
	switch {
	case n.GetInsertStmt() != nil:
		ins := n.GetInsertStmt()
		o, err := targetTable(cat, ins.Relation)
		if err != nil {
			return err
		}
		_, err = bindInsert(cat, o, ins, paramText, s.params())
		return err
	case n.GetUpdateStmt() != nil:
		up := n.GetUpdateStmt()
		t, err := bindTarget(cat, up.Relation, up.WhereClause, paramText, s.params())
		if err != nil {
			return err
		}
		_, _, err = bindUpdateSets(t.b, t.sc, t.o, up)
		return err
	case n.GetDeleteStmt() != nil:
		del := n.GetDeleteStmt()
		_, err := bindTarget(cat, del.Relation, del.WhereClause, paramText, s.params())
		return err
	case n.GetCopyStmt() != nil && n.GetCopyStmt().Relation != nil:
		_, err := targetTable(cat, n.GetCopyStmt().Relation)
		return err
	}
	return nil
}
