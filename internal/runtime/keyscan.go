package runtime

import (
	"context"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// An UPDATE or DELETE whose WHERE bounds the leading columns of the
// table's key (keyrange.go) or of one of its indexes (indexscan.go) finds
// every row it can change in those key ranges, and reads them instead of
// the whole table. The WHERE is still
// evaluated on each row read: the ranges only bound the candidates.

// readCandidates returns the rows of o that where can keep, in key order:
// those in the key ranges where bounds, else all of them.
func readCandidates(ctx context.Context, st state.Reader, cat *catalog, o *object, where plan.Expr, par diff.Parallelism) (zset.Batch, error) {
	return readAccess(ctx, st, o, chooseAccess(cat, o, [][]plan.Expr{{where}}, true), par)
}
