package runtime

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
)

// execLock runs LOCK TABLE ... IN ACCESS SHARE MODE, which pg_dump sends
// for each table it dumps: inside a transaction block it checks that the
// relations exist and takes no lock (RockStream has no table locks; a
// DDL statement may commit while the block runs). Other lock modes fail
// with 0A000.
func (s *Session) execLock(_ context.Context, ls *pg.LockStmt) (*Result, error) {
	if ls.Mode != 1 { // AccessShareLock
		return nil, errs.New(errs.FeatureNotSupported, "LOCK TABLE is only supported IN ACCESS SHARE MODE")
	}
	if s.txn == nil || !s.txn.Block() {
		return nil, errs.New(errs.NoActiveTransaction, "LOCK TABLE can only be used in transaction blocks")
	}
	cat := s.catalog()
	for _, n := range ls.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			continue
		}
		if o := s.resolveIn(cat, qualifiedName(rv.Schemaname, rv.Relname)); o == nil {
			return nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", qualifiedName(rv.Schemaname, rv.Relname))
		}
	}
	return &Result{Tag: "LOCK TABLE"}, nil
}
