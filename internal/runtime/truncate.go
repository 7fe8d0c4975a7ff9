package runtime

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// execTruncate empties tables, as PostgreSQL's
//
//	TRUNCATE [TABLE] [ONLY] name [, ...] [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE | RESTRICT]
//
// does: every named table loses all its rows in one statement, and the
// views over them change by the rows removed. RockStream tables have
// neither identity columns nor foreign keys, so the identity and cascade
// options change nothing. A table named twice is emptied once.
func (s *Session) execTruncate(ctx context.Context, tr *pg.TruncateStmt) (*Result, error) {
	err := s.writeStatement(ctx, func(st state.Store, w *epochWrite) (*catalog, error) {
		seen := map[uint64]bool{}
		for _, n := range tr.Relations {
			o, err := targetTable(w.cat, n.GetRangeVar())
			if err != nil {
				return nil, err
			}
			if o.appendOnly {
				return nil, appendOnlyError(o, "truncate")
			}
			if seen[o.id] {
				continue
			}
			seen[o.id] = true
			rows, err := readRelation(ctx, st, o)
			if err != nil {
				return nil, err
			}
			delta := make(zset.Batch, len(rows))
			for i, e := range rows {
				delta[i] = zset.Entry{Row: e.Row, Weight: -e.Weight}
			}
			if err := writeTable(ctx, st, w, o, delta); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, false)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "TRUNCATE TABLE"}, nil
}
