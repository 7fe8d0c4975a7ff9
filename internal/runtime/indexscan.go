package runtime

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/internal/diff"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// Reads through an index. A predicate that does not bound the leading
// column of a relation's stored order, but bounds the leading columns of
// one of its indexes (the same conditions as keyrange.go: = and IN on
// leading columns, a range on the next, with integer and numeric
// comparisons translated into the column's values), is answered by
// reading those ranges of the index, whose entries hold the rows. The
// predicate is still evaluated on each row read. When several indexes
// (or an index and the stored order) apply, the one whose conditions fix
// the most columns is read, the stored order on a tie, then the index
// created first; a
// relation scanned several times in one query is read through an index
// only when one index bounds every scan.

// scanAccess is how a query reads a relation: every row, the key ranges of
// its stored order, or ranges of one of its indexes.
type scanAccess struct {
	ix     *index // nil: the stored order
	ranges []keyRange
	ok     bool // false: every row
}

// order is ix's order of o's rows, for keyRangesOn.
func (ix *index) order() keyOrder {
	return keyOrder{cols: ix.cols, route: len(ix.cols), prefix: ix.prefix()}
}

// chooseAccess decides how to read o for scans, the predicates of each
// of o's scans (scanUses); withIndexes says whether o's indexes may be
// read (not for a read at an earlier epoch: indexes keep no history).
func chooseAccess(cat *catalog, o *object, scans [][]plan.Expr, withIndexes bool) scanAccess {
	var best scanAccess
	bestScore := 0
	if rs, ok := scanRanges(o, scans); ok {
		best = scanAccess{ranges: rs, ok: true}
		for _, preds := range scans {
			bestScore += condScore(findKeyConds(o, preds...))
		}
	}
	if !withIndexes || o.system != nil || len(scans) == 0 || fullScansOnly.Load() {
		return best
	}
	for _, ix := range cat.indexesOf(o) {
		ord := ix.order()
		var all []keyRange
		score := 0
		for _, preds := range scans {
			conds := findCondsOn(o, ix.cols, preds...)
			rs, ok := keyRangesOn(o, ord, conds)
			if !ok {
				score = -1
				break
			}
			all = append(all, rs...)
			score += condScore(conds)
		}
		if score > bestScore {
			if len(scans) > 1 {
				all = mergeRanges(all)
			}
			best, bestScore = scanAccess{ix: ix, ranges: all, ok: true}, score
		}
	}
	return best
}

// condScore rates the conditions that decide an index's ranges: two for
// each position fixed by = or IN, one for a bounded position after them.
func condScore(conds []keyCond) int {
	score := 0
	for _, c := range rangeConds(conds) {
		if c.op == "=" {
			score += 2
		} else {
			score++
		}
	}
	return max(score, 1)
}

// readIndexRanges returns the rows of o whose entries in ix lie in ranges
// (sorted, disjoint), in index order, as r holds them.
func readIndexRanges(ctx context.Context, r state.Reader, o *object, ix *index, ranges []keyRange, par diff.Parallelism) (zset.Batch, error) {
	if cr, ok := r.(currentReader); ok {
		r = cr.Reader
	}
	return readStored(ctx, r, ix.prefix(), ranges, ix.entryOrderKey(o), par)
}

// readAccess reads o's rows as acc says, in o's key order (arrival-order
// tables read through an index: in index order).
func readAccess(ctx context.Context, r state.Reader, o *object, acc scanAccess, par diff.Parallelism) (zset.Batch, error) {
	switch {
	case acc.ix != nil:
		rows, err := readIndexRanges(ctx, r, o, acc.ix, acc.ranges, par)
		if err != nil {
			return nil, err
		}
		if keyOf := o.rowOrderKey(); keyOf != nil && len(rows) > 1 {
			keys := make([][]byte, len(rows))
			for i, e := range rows {
				keys[i] = keyOf(nil, e.Row)
			}
			idx := make([]int, len(rows))
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
			sorted := make(zset.Batch, len(rows))
			for i, j := range idx {
				sorted[i] = rows[j]
			}
			rows = sorted
		}
		return rows, nil
	case acc.ok:
		return readKeyRanges(ctx, r, o, acc.ranges, par)
	}
	return readRelationOn(ctx, r, o, par)
}

// explainAccess describes, as PostgreSQL's EXPLAIN words it, how a scan
// of o filtered by preds is read under acc.
func explainAccess(o *object, acc scanAccess, preds []plan.Expr) []string {
	var conds []keyCond
	var head, label string
	switch {
	case acc.ix != nil:
		conds = rangeConds(findCondsOn(o, acc.ix.cols, preds...))
		head, label = "Index Scan using "+acc.ix.name+" on "+o.name, "Index Cond"
	case acc.ok:
		conds = rangeConds(findKeyConds(o, preds...))
		head, label = "Key Range Scan on "+o.name, "Key Cond"
		if len(o.pk) > 0 {
			head, label = "Index Scan using "+o.name+"_pkey on "+o.name, "Index Cond"
		}
	default:
		return []string{"Seq Scan on " + o.name}
	}
	if len(conds) == 0 {
		// Another scan of o decides its ranges; this one reads them.
		return []string{head}
	}
	texts := make([]string, len(conds))
	for i, c := range conds {
		texts[i] = c.text
		if len(conds) > 1 {
			texts[i] = "(" + c.text + ")"
		}
	}
	return []string{head, "  " + label + ": (" + strings.Join(texts, " AND ") + ")"}
}
