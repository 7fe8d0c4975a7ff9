package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/pgcatalog"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/storage"
	"github.com/rockstream/rockstream/internal/zset"
)

// Secondary indexes. CREATE INDEX builds a maintained arrangement of a
// table's or a materialized view's rows ordered by some of its columns
// (docs/format/storage.md, "0x06 index entries"):
//
//	0x06 | index id uvarint | bucket u8 | EncodeKey(index columns) | row identity  →  weight varint | row
//
// The row identity is the relation's primary key (EncodeKey of its
// columns) when it has one, else EncodeKey of the whole row followed by
// its exact encoding, so that each stored row has exactly one entry; the
// bucket is that of the index columns' key, so that a lookup fixing every
// index column touches one bucket. The value is the stored row's own
// value: a read of the index needs no second read of the relation.
//
// Invariants:
//   - An index holds exactly one entry per distinct stored row of its
//     relation, with the row's weight, after every statement: every
//     change to the relation's rows (table writes of every kind, view
//     deltas) is applied to its indexes in the same overlay, so in the
//     same atomic epoch batch (indexwrite.go). verifyIndexesLocked checks
//     it.
//   - Reading an index range returns a subset of the relation's rows that
//     holds every row the predicate can keep; the predicate is still
//     evaluated on every row read (indexscan.go).
//   - An index's catalog record is replayed after its relation's (ids
//     grow), and dropping a relation drops its indexes in the same
//     statement.

// nsIndex is the namespace of index entries.
const nsIndex byte = 0x06

// index is one secondary index.
type index struct {
	id   uint64
	name string
	// rel is the catalog id of the indexed relation, relName its name
	// when the index was created.
	rel     uint64
	relName string
	cols    []int // the relation's columns, in index key order
	sqlText string
	// unique is set for a UNIQUE index: no two rows of the relation have
	// equal index keys, NULLs apart unless nullsNotDistinct
	// (uniqueindex.go).
	unique, nullsNotDistinct bool
	// constraint is set for the index of a UNIQUE constraint
	// (uniqueconstraint.go), which only dropping the constraint drops.
	constraint bool
}

// prefix is where the index's entries are stored.
func (ix *index) prefix() []byte { return relPrefix(nsIndex, ix.id) }

// columnNames returns the names of the index's columns in o.
func (ix *index) columnNames(o *object) []string {
	names := make([]string, len(ix.cols))
	for i, c := range ix.cols {
		names[i] = o.cols[c].Name
	}
	return names
}

// definition is the index's defining statement as pg_indexes shows it.
func (c *catalog) definition(ix *index, o *object) string {
	sch, rel := c.splitKey(o.name)
	_, name := c.splitKey(ix.name)
	return fmt.Sprintf("CREATE %sINDEX %s ON %s.%s USING btree (%s)%s", ix.uniqueWord(), quoteIdent(name), quoteIdent(sch), quoteIdent(rel),
		strings.Join(quoteIdents(ix.columnNames(o)), ", "), ix.nullsClause())
}

func quoteIdents(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}

// objectByID returns the relation with catalog id id, or nil.
func (c *catalog) objectByID(id uint64) *object {
	for _, o := range c.byName {
		if o.id == id {
			return o
		}
	}
	return nil
}

// indexesOf returns o's indexes, in creation order.
func (c *catalog) indexesOf(o *object) []*index {
	var out []*index
	for _, ix := range c.indexes {
		if ix.rel == o.id {
			out = append(out, ix)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// relationNameTaken reports whether a relation or an index is called name.
func (c *catalog) relationNameTaken(name string) bool {
	return c.lookup(name) != nil || c.indexes[name] != nil
}

// maxIdentifierLength is PostgreSQL's NAMEDATALEN - 1.
const maxIdentifierLength = 63

// chooseIndexName is the name PostgreSQL gives an index created without
// one: table_col1_col2_idx, shortened to 63 bytes, with a number after
// idx when the name is taken.
func chooseIndexName(cat interface{ relationNameTaken(string) bool }, table string, cols []string) string {
	return chooseRelationName(cat, table, cols, "idx")
}

// chooseRelationName is PostgreSQL's ChooseRelationName: table_cols_label
// (label "idx" for an index, "key" for a UNIQUE constraint), with a
// number after label while the name is taken.
func chooseRelationName(cat interface{ relationNameTaken(string) bool }, table string, cols []string, base string) string {
	name2 := strings.Join(cols, "_")
	for n := 0; ; n++ {
		label := base
		if n > 0 {
			label = fmt.Sprintf("%s%d", base, n)
		}
		name := makeObjectName(table, name2, label)
		if !cat.relationNameTaken(name) {
			return name
		}
	}
}

// makeObjectName joins name1, name2 and label with underscores, cutting
// the longer of name1 and name2 until the whole fits in 63 bytes, as
// PostgreSQL's makeObjectName does.
func makeObjectName(name1, name2, label string) string {
	n1, n2 := len(name1), len(name2)
	over := len(label) + 1
	if name2 != "" {
		over++
	}
	for n1+n2+over > maxIdentifierLength {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	name1, name2 = clipUTF8(name1, n1), clipUTF8(name2, n2)
	if name2 == "" {
		return name1 + "_" + label
	}
	return name1 + "_" + name2 + "_" + label
}

// clipUTF8 cuts s to at most n bytes without splitting a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// createIndex runs CREATE INDEX: it checks the statement, builds the
// index from the relation's rows in st and returns the catalog holding it.
func createIndex(ctx context.Context, st state.Store, cat *catalog, is *pg.IndexStmt, recovering bool) (*catalog, *Result, error) {
	switch {
	case is.Primary || is.Isconstraint:
		return nil, nil, errs.New(errs.FeatureNotSupported, "an index that is a constraint is not supported; a table's PRIMARY KEY is its unique key")
	case is.AccessMethod != "" && is.AccessMethod != "btree":
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "index access method %q is not supported; indexes are btree", is.AccessMethod)
	case len(is.IndexIncludingParams) > 0:
		return nil, nil, errs.New(errs.FeatureNotSupported, "INCLUDE columns of an index are not supported; every index already holds the whole row")
	case is.WhereClause != nil:
		return nil, nil, errs.New(errs.FeatureNotSupported, "partial indexes (CREATE INDEX ... WHERE) are not supported")
	case len(is.Options) > 0:
		return nil, nil, errs.New(errs.FeatureNotSupported, "index storage parameters (WITH (...)) are not supported")
	case is.TableSpace != "":
		return nil, nil, errs.New(errs.FeatureNotSupported, "tablespaces are not supported")
	case is.NullsNotDistinct && !is.Unique:
		return nil, nil, errs.New(errs.SyntaxError, "NULLS NOT DISTINCT is only allowed for unique indexes")
	}
	rv := is.Relation
	o := cat.resolveRV(rv)
	switch {
	case o == nil:
		return nil, nil, errs.Newf(errs.UndefinedTable, "relation %q does not exist", qualifiedName(rv.Schemaname, rv.Relname))
	case o.system != nil:
		return nil, nil, systemRelationError(o, "index")
	case o.kind == sql.View:
		return nil, nil, &errs.Error{Code: errs.WrongObjectType, SQLState: "42809",
			Message: fmt.Sprintf("cannot create index on relation %q", o.name),
			Detail:  "This operation is not supported for views."}
	case is.Unique && o.kind != sql.Table:
		return nil, nil, errs.New(errs.FeatureNotSupported, "unique indexes on materialized views are not supported; a view grouped by its key has one row per key")
	case is.Unique && cat.shard() != nil:
		return nil, nil, unsupportedInShard("a unique index other than the primary key (its rows are in several shards)")
	case is.Unique && o.unstored:
		return nil, nil, errs.Newf(errs.FeatureNotSupported, "unique indexes on unstored table %q are not supported: it keeps no rows to compare with", o.name)
	}
	ix := &index{rel: o.id, relName: o.name, unique: is.Unique, nullsNotDistinct: is.NullsNotDistinct}
	for _, p := range is.IndexParams {
		el := p.GetIndexElem()
		switch {
		case el == nil:
			return nil, nil, errs.New(errs.FeatureNotSupported, "this kind of index element is not supported")
		case el.Expr != nil:
			return nil, nil, errs.New(errs.FeatureNotSupported, "indexes on expressions are not supported; index columns")
		case len(el.Collation) > 0 || len(el.Opclass) > 0 || len(el.Opclassopts) > 0:
			return nil, nil, errs.New(errs.FeatureNotSupported, "COLLATE and operator classes in an index are not supported")
		case el.Ordering != pg.SortByDir_SORTBY_DEFAULT && el.Ordering != pg.SortByDir_SORTBY_ASC,
			el.NullsOrdering != pg.SortByNulls_SORTBY_NULLS_DEFAULT && el.NullsOrdering != pg.SortByNulls_SORTBY_NULLS_LAST:
			return nil, nil, errs.New(errs.FeatureNotSupported, "DESC and NULLS FIRST index columns are not supported; an index is read in both directions")
		}
		c, err := o.columnIndex(el.Name)
		if err != nil {
			return nil, nil, errs.Newf(errs.UndefinedColumn, "column %q does not exist", el.Name)
		}
		if err := indexableColumn(o, c); err != nil {
			return nil, nil, err
		}
		ix.cols = append(ix.cols, c)
	}
	if key := indexKey(cat, o, is.Idxname); is.IfNotExists && is.Idxname != "" && cat.relationNameTaken(key) {
		return nil, &Result{Tag: "CREATE INDEX", skipped: existsSkipping(key)}, nil
	}
	nc, err := addIndex(ctx, st, cat, o, ix, is.Idxname, "idx", recovering)
	if err != nil {
		return nil, nil, err
	}
	return nc, &Result{Tag: "CREATE INDEX"}, nil
}

// indexableColumn refuses column c of o as an index column when its
// type has no order.
func indexableColumn(o *object, c int) error {
	if t := o.cols[c].Type; !ordered(t.ID) {
		return errs.Newf(errs.FeatureNotSupported, "indexes on columns of type %s are not supported", t.TypName())
	}
	return nil
}

// indexKey is the catalog key of an index called name on o: an index is
// in its relation's schema.
func indexKey(cat *catalog, o *object, name string) string {
	sch, _ := cat.splitKey(o.name)
	return normalizeName(sch, name)
}

// addIndex names ix (name, or when empty the name PostgreSQL chooses with
// label: "idx" for an index, "key" for a UNIQUE constraint), gives it the
// next id and builds it from o's rows in st unless recovering. It
// returns the catalog holding it.
func addIndex(ctx context.Context, st state.Store, cat *catalog, o *object, ix *index, name, label string, recovering bool) (*catalog, error) {
	if len(ix.cols) > 32 {
		return nil, errs.New(errs.TooManyColumns, "cannot use more than 32 columns in an index")
	}
	sch, bare := cat.splitKey(o.name)
	ix.name = normalizeName(sch, name)
	if name == "" {
		ix.name = normalizeName(sch, chooseRelationName(cat.inSchemaNamed(sch), bare, ix.columnNames(o), label))
	}
	if cat.relationNameTaken(ix.name) {
		_, bareName := cat.splitKey(ix.name)
		return nil, errs.Newf(errs.DuplicateTable, "relation %q already exists", bareName)
	}
	ix.sqlText = cat.indexSQL(ix, o)
	nc := cat.clone()
	ix.id = nc.nextID
	nc.nextID++
	nc.indexes[ix.name] = ix
	if !recovering {
		if err := buildIndex(ctx, st, nc, o, ix); err != nil {
			return nil, err
		}
	}
	return nc, nil
}

// buildIndex writes ix's entries for o's rows in st, in chunks of
// backfillChunkRows rows, reporting its progress as a view's backfill
// does: in rockstream_catalog.progress, and in NOTICEs ("build of index
// i: 400000 of 1000000 rows") once it has run backfillNoticeAfter.
func buildIndex(ctx context.Context, st state.Store, cat *catalog, o *object, ix *index) error {
	rep, _ := ctx.Value(stmtProgressKey{}).(*progressReporter)
	var entry *progressEntry
	if rep != nil {
		entry = rep.eng.progress.start(rep.session, "index build", ix.name, "rows", "reading "+o.name)
		defer rep.eng.progress.end(entry)
	}
	par := cat.parallelism()
	rows, err := readRelationOn(ctx, st, o, par)
	if err != nil {
		return err
	}
	if o.storesInArrivalOrder() {
		// Equal rows are separate stored entries; the index has one.
		if rows, err = zset.Consolidate(rows); err != nil {
			return err
		}
	}
	total := len(rows)
	if entry != nil {
		entry.total.Store(int64(total))
		entry.phase.Store("writing entries")
	}
	started := time.Now()
	nextNotice, noticed := started.Add(backfillNoticeAfter), false
	for done := 0; done < total; {
		n := min(total-done, backfillChunkRows)
		if err := writeIndex(st, o, ix, rows[done:done+n], par, true); err != nil {
			return err
		}
		if err := checkUniqueBuild(st, o, ix, rows[done:done+n]); err != nil {
			return err
		}
		done += n
		if entry != nil {
			entry.done.Store(int64(done))
		}
		if now := time.Now(); rep != nil && (!now.Before(nextNotice) || noticed && done == total) {
			rep.notice(fmt.Sprintf("build of index %s: %d of %d rows", ix.name, done, total))
			noticed, nextNotice = true, now.Add(backfillNoticeEvery)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexStmt runs DROP INDEX [IF EXISTS] name [, ...].
func dropIndexStmt(st state.Store, cat *catalog, ds *pg.DropStmt) (*catalog, *Result, error) {
	nc := cat.clone()
	for _, obj := range ds.Objects {
		var parts []string
		for _, item := range obj.GetList().Items {
			parts = append(parts, item.GetString_().Sval)
		}
		if err := cat.checkNameParts(parts); err != nil {
			return nil, nil, err
		}
		name := parts[len(parts)-1]
		if len(parts) > 1 {
			name = qualifiedName(parts[len(parts)-2], name)
		}
		ix := cat.resolveIndex(name)
		if ix == nil {
			if o := cat.resolve(name); o != nil {
				return nil, nil, errs.Newf(errs.WrongObjectType, "%q is not an index", name)
			}
			if ds.MissingOk {
				continue
			}
			return nil, nil, errs.Newf(errs.UndefinedObject, "index %q does not exist", name)
		}
		if ix.constraint {
			return nil, nil, constraintIndexDrop(cat, ix)
		}
		if err := dropIndex(st, nc, ix); err != nil {
			return nil, nil, err
		}
	}
	return nc, &Result{Tag: "DROP INDEX"}, nil
}

// dropIndex removes ix from cat and its entries from st.
func dropIndex(st state.Store, cat *catalog, ix *index) error {
	delete(cat.indexes, ix.name)
	return deletePrefix(st, ix.prefix())
}

// dropIndexesOf removes o's indexes, when o is dropped.
func dropIndexesOf(st state.Store, cat *catalog, o *object) error {
	for _, ix := range cat.indexesOf(o) {
		if err := dropIndex(st, cat, ix); err != nil {
			return err
		}
	}
	return nil
}

// indexRecordKind is the kind of an index's catalog record.
const indexRecordKind = "index"

// persistIndexes writes the records of indexes created between old and
// next and deletes those of indexes dropped.
func persistIndexes(st state.Store, old, next *catalog) error {
	for name, ix := range next.indexes {
		if old.indexes[name] == ix {
			continue
		}
		payload, err := json.Marshal(catalogRecord{ID: ix.id, Kind: indexRecordKind, Name: ix.name, SQL: ix.sqlText, Constraint: ix.constraint})
		if err != nil {
			return err
		}
		if err := st.Set(catalogKey(ix.id), storage.EncodeRecord(catalogRecordKind, catalogRecordVersion, payload)); err != nil {
			return err
		}
	}
	live := make(map[uint64]bool, len(next.indexes))
	for _, ix := range next.indexes {
		live[ix.id] = true
	}
	for _, ix := range old.indexes {
		// An index rebuilt under its name keeps its id and so its record.
		if !live[ix.id] {
			if err := st.Delete(catalogKey(ix.id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// recreated reports whether replaying rec made the object it records.
func recreated(cat *catalog, rec catalogRecord) bool {
	if rec.Kind == indexRecordKind {
		ix := cat.indexes[rec.Name]
		return ix != nil && ix.id == rec.ID
	}
	o := cat.lookup(rec.Name)
	return o != nil && o.id == rec.ID
}

// indexObjects maps each index's id to a stand-in object naming it, for
// the checks of Check that every stored key belongs to a catalog entry.
func indexObjects(c *catalog) map[uint64]*object {
	out := make(map[uint64]*object, len(c.indexes))
	for _, ix := range c.indexes {
		out[ix.id] = &object{id: ix.id, name: ix.name}
	}
	return out
}

// pgIndexes describes o's indexes to the system catalog.
func (c *catalog) pgIndexes(o *object) []pgcatalog.Index {
	var out []pgcatalog.Index
	for _, ix := range c.indexesOf(o) {
		_, name := c.splitKey(ix.name)
		out = append(out, pgcatalog.Index{ID: ix.id, Name: name, Cols: ix.cols, Unique: ix.unique, NullsNotDistinct: ix.nullsNotDistinct, Constraint: ix.constraint})
	}
	return out
}

// indexNames returns the names of every index, sorted.
func (c *catalog) indexNames() []string {
	names := make([]string, 0, len(c.indexes))
	for n := range c.indexes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
