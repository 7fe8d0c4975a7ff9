package runtime

import (
	"cmp"
	"context"
	"slices"

	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
)

// reindexChanged brings the indexes of the relations a DDL statement
// changed (ALTER TABLE, a rename, CREATE OR REPLACE MATERIALIZED VIEW) in
// line with them, in the statement's epoch: an index entry holds a copy of
// its row, and its catalog record names the relation and its columns, so
// both must follow the relation.
//
// An index of a changed relation keeps its name and id; its columns are
// found again in the new definition — a table's by column number (which
// ALTER TABLE keeps across renames and drops), a materialized view's by
// name — and it is rebuilt from the relation's new rows. An index on a
// column that is gone is dropped, as PostgreSQL drops it with the column.
func reindexChanged(ctx context.Context, st state.Store, old, next *catalog) error {
	for _, ix := range next.indexesInOrder() {
		was, now := old.objectByID(ix.rel), next.objectByID(ix.rel)
		if now == nil {
			if err := dropIndex(st, next, ix); err != nil {
				return err
			}
			continue
		}
		if was == now {
			continue
		}
		cols, ok := indexColumnsIn(ix, was, now)
		if !ok {
			if err := dropIndex(st, next, ix); err != nil {
				return err
			}
			continue
		}
		nix := &index{id: ix.id, name: ix.name, rel: now.id, relName: now.name, cols: cols,
			unique: ix.unique, nullsNotDistinct: ix.nullsNotDistinct, constraint: ix.constraint}
		nix.sqlText = next.indexSQL(nix, now)
		if err := deletePrefix(st, ix.prefix()); err != nil {
			return err
		}
		next.indexes[nix.name] = nix
		if err := buildIndex(ctx, st, next, now, nix); err != nil {
			return err
		}
	}
	return nil
}

// indexColumnsIn finds ix's columns of was in now; false when one of
// them is gone or can no longer be indexed.
func indexColumnsIn(ix *index, was, now *object) ([]int, bool) {
	cols := make([]int, len(ix.cols))
	for k, c := range ix.cols {
		i := -1
		if was.kind == sql.Table && now.kind == sql.Table {
			i = slices.Index(now.attnumsOf(), was.attnumsOf()[c])
		} else {
			i = now.colIndex(was.cols[c].Name)
		}
		if i < 0 || !ordered(now.cols[i].Type.ID) {
			return nil, false
		}
		cols[k] = i
	}
	return cols, true
}

// indexesInOrder returns every index, in creation order.
func (c *catalog) indexesInOrder() []*index {
	out := make([]*index, 0, len(c.indexes))
	for _, ix := range c.indexes {
		out = append(out, ix)
	}
	slices.SortFunc(out, func(a, b *index) int { return cmp.Compare(a.id, b.id) })
	return out
}
