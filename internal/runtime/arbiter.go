package runtime

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/zset"
)

// ON CONFLICT arbiters. The arbiters of INSERT ... ON CONFLICT are the
// unique keys whose conflicts the clause resolves, inferred as
// PostgreSQL's infer_arbiter_indexes does: ON CONSTRAINT name is the
// primary key or the UNIQUE constraint so named; a column list is every
// unique key (primary key, unique index, UNIQUE constraint) over exactly
// that set of columns; no target (DO NOTHING only) is every unique key.
//
// Invariants:
//   - A proposed row conflicts when an arbiter's key of it (one without
//     NULLs, or any under NULLS NOT DISTINCT) is held by a row of the
//     table as the statement sees it: the stored rows (the transaction
//     block's included) less those the statement updated, plus the rows
//     the statement inserted or updated so far.
//   - DO UPDATE of a row the statement itself inserted or updated fails
//     with 21000, as in PostgreSQL; DO UPDATE whose WHERE is false leaves
//     the row untouched, so a later proposed row may still update it.
//   - Conflicts on keys that are not arbiters are left to the checks of
//     the write (the primary key here, unique indexes in
//     uniqueindex.go): they fail the statement with 23505.

// arbiter is one unique key of a table: its primary key (ix nil) or a
// unique index.
type arbiter struct {
	ix   *index
	cols []int
}

// uniqueKeys returns o's unique keys: its primary key, then its unique
// indexes in creation order.
func uniqueKeys(cat *catalog, o *object) []arbiter {
	var out []arbiter
	if len(o.pk) > 0 {
		out = append(out, arbiter{cols: o.pk})
	}
	for _, ix := range cat.indexesOf(o) {
		if ix.unique {
			out = append(out, arbiter{ix: ix, cols: ix.cols})
		}
	}
	return out
}

// noArbiter is PostgreSQL's error when no unique key matches the target.
func noArbiter() error {
	return errs.New(errs.InvalidColumnRef, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
}

// inferArbiters returns the arbiters of an ON CONFLICT clause with
// target inf (nil when none) on o.
func inferArbiters(cat *catalog, b *sql.Binder, o *object, alias string, inf *pg.InferClause) ([]arbiter, error) {
	keys := uniqueKeys(cat, o)
	if inf == nil {
		return keys, nil
	}
	_, table := cat.splitKey(o.name)
	if inf.Conname != "" {
		for _, a := range keys {
			if a.ix == nil && inf.Conname == table+"_pkey" {
				return []arbiter{a}, nil
			}
			if a.ix != nil && a.ix.constraint {
				if _, name := cat.splitKey(a.ix.name); name == inf.Conname {
					return []arbiter{a}, nil
				}
			}
		}
		return nil, errs.Newf(errs.UndefinedObject, "constraint %q for table %q does not exist", inf.Conname, table)
	}
	var cols []int
	expression := false
	for _, ie := range inf.IndexElems {
		el := ie.GetIndexElem()
		switch {
		case el == nil || el.Expr != nil:
			// No index is on an expression, so none matches.
			expression = true
			continue
		case len(el.Collation) > 0 || len(el.Opclass) > 0:
			return nil, errs.New(errs.FeatureNotSupported, "COLLATE and operator classes in an ON CONFLICT target are not supported")
		}
		i, err := o.columnIndex(el.Name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(cols, i) {
			cols = append(cols, i)
		}
	}
	if inf.WhereClause != nil {
		// Every index is whole, so every one satisfies the predicate; it
		// must still be a valid predicate over the table.
		if _, err := b.Predicate(b.TableScope(o.name, alias, o.cols), inf.WhereClause, "WHERE"); err != nil {
			return nil, err
		}
	}
	var out []arbiter
	for _, a := range keys {
		if !expression && sameColumnSet(a.cols, cols) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, noArbiter()
	}
	return out, nil
}

// sameColumnSet reports whether a and b hold the same columns.
func sameColumnSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	return true
}

// arbitration is the state of one INSERT ... ON CONFLICT over its
// proposed rows. Rows are known by their identity (identityKey).
type arbitration struct {
	st state.Reader
	o  *object
	// keys are every unique key of o, in PostgreSQL's order of checking
	// them (creation order); arbiter marks those that are arbiters.
	keys    []arbiter
	arbiter []bool
	// written holds the current version of each row the statement
	// inserted or updated; touched every identity it wrote (an updated
	// row's old one too); replaced the stored rows it updated, whose
	// stored versions it no longer sees.
	written           map[string]zset.Row
	touched, replaced map[string]bool
	// held maps, per key, the keys of the written rows to their
	// identities.
	held []map[string]string
	key  []byte
}

func newArbitration(st state.Reader, o *object, c *onConflict) *arbitration {
	a := &arbitration{st: st, o: o, keys: c.keys, arbiter: make([]bool, len(c.keys)), written: map[string]zset.Row{},
		touched: map[string]bool{}, replaced: map[string]bool{}, held: make([]map[string]string, len(c.keys))}
	for i, k := range c.keys {
		a.held[i] = map[string]string{}
		a.arbiter[i] = slices.ContainsFunc(c.arbiters, func(arb arbiter) bool { return arb.ix == k.ix })
	}
	return a
}

// keyOf is row's key in key i (a stored row's key for the primary key,
// an index key prefix for a unique index), nil when its NULLs exempt it;
// valid until the next call.
func (a *arbitration) keyOf(i int, row zset.Row) []byte {
	k := a.keys[i]
	if k.ix == nil {
		a.key = a.o.keyOf()(a.key[:0], a.o.rowsPrefix(), row)
		return a.key
	}
	if !k.ix.nullsNotDistinct && slices.ContainsFunc(k.cols, func(c int) bool { return row[c].IsNull() }) {
		return nil
	}
	a.key = k.ix.lookupKey(a.key[:0], row)
	return a.key
}

// holder returns the row that holds row's value of key i, other than
// the row identified by except (none when ""), and its identity; ok is
// false when there is none.
func (a *arbitration) holder(i int, row zset.Row, except string) (zset.Row, string, bool, error) {
	k := a.keyOf(i, row)
	if k == nil {
		return nil, "", false, nil
	}
	if id, ok := a.held[i][string(k)]; ok && id != except {
		return a.written[id], id, true, nil
	}
	var found zset.Row
	var foundID string
	var bad error
	visit := func(_, v []byte) bool {
		e, err := decodeStored(v)
		if err != nil {
			bad = err
			return false
		}
		id := string(identityKey(nil, a.o.pk, e.Row))
		if e.Weight > 0 && !a.replaced[id] && id != except {
			found, foundID = e.Row, id
			return false
		}
		return true
	}
	var err error
	if a.keys[i].ix == nil {
		var v []byte
		var ok bool
		if v, ok, err = a.st.Get(k); err == nil && ok {
			visit(nil, v)
		}
	} else {
		err = a.st.Scan(k, state.PrefixEnd(k), visit)
	}
	if err == nil {
		err = bad
	}
	if err != nil || found == nil {
		return nil, "", false, err
	}
	return found, foundID, true, nil
}

// conflicting returns the row that row conflicts with on an arbiter and
// its identity; ok is false when there is none.
func (a *arbitration) conflicting(row zset.Row) (zset.Row, string, bool, error) {
	for i := range a.keys {
		if !a.arbiter[i] {
			continue
		}
		if r, id, ok, err := a.holder(i, row, ""); ok || err != nil {
			return r, id, ok, err
		}
	}
	return nil, "", false, nil
}

// checkKeys fails with 23505 when another row holds one of row's unique
// keys, checked as PostgreSQL checks a row it writes: key by key, at
// once. old is the identity of the row that row replaces ("" for an
// insertion). The arbiters of an insertion were just checked, and an
// update keeps the primary key: those keys are not read again.
func (a *arbitration) checkKeys(row zset.Row, old string) error {
	for i, k := range a.keys {
		if old == "" && a.arbiter[i] || old != "" && k.ix == nil {
			continue
		}
		_, _, ok, err := a.holder(i, row, old)
		if err != nil {
			return err
		}
		if ok {
			if k.ix == nil {
				return a.o.uniqueViolation(row)
			}
			return k.ix.violation(a.o, row)
		}
	}
	return nil
}

// write records row as written by the statement; old is the identity of
// the stored row it replaces, "" for an insertion.
func (a *arbitration) write(row zset.Row, old string) {
	id := string(identityKey(nil, a.o.pk, row))
	if old != "" {
		a.replaced[old], a.touched[old] = true, true
	}
	a.written[id], a.touched[id] = row, true
	for i := range a.keys {
		if k := a.keyOf(i, row); k != nil {
			a.held[i][string(k)] = id
		}
	}
}

// insertArbitrated inserts rows into o resolving ON CONFLICT c against
// its arbiters. It returns the table delta and the rows inserted or
// updated (for RETURNING and the row count).
func insertArbitrated(st state.Store, o *object, rows []zset.Row, c *onConflict, b *sql.Binder, nUser int) (zset.Batch, []zset.Row, error) {
	a := newArbitration(st, o, c)
	var delta zset.Batch
	var affected []zset.Row
	for _, r := range rows {
		existing, id, found, err := a.conflicting(r)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			if err := a.checkKeys(r, ""); err != nil {
				return nil, nil, err
			}
			a.write(r, "")
			delta = append(delta, zset.Entry{Row: r, Weight: 1})
			affected = append(affected, r)
			continue
		}
		if !c.doUpdate {
			continue
		}
		if a.touched[id] {
			e := errs.New(errs.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").(*errs.Error)
			e.Hint = "Ensure that no rows proposed for insertion within the same command have duplicate constrained values."
			return nil, nil, e
		}
		for j, v := range r {
			(*b.Params)[nUser+j] = v
		}
		if c.where != nil {
			ok, err := c.where.Eval(existing)
			if err != nil {
				return nil, nil, err
			}
			if ok.IsNull() || !ok.Bool() {
				continue
			}
		}
		updated, err := applySets(o, c.sets, existing)
		if err != nil {
			return nil, nil, err
		}
		if len(o.pk) > 0 && string(identityKey(nil, o.pk, updated)) != id {
			return nil, nil, errs.New(errs.FeatureNotSupported, "ON CONFLICT DO UPDATE may not change the primary key")
		}
		if err := a.checkKeys(updated, id); err != nil {
			return nil, nil, err
		}
		a.write(updated, id)
		delta = append(delta, zset.Entry{Row: existing, Weight: -1}, zset.Entry{Row: updated, Weight: 1})
		affected = append(affected, updated)
	}
	return delta, affected, nil
}
