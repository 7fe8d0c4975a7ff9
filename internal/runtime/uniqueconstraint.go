package runtime

import (
	"context"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
)

// UNIQUE constraints. A UNIQUE constraint (in CREATE TABLE, on a column
// or on the table, or added by ALTER TABLE ... ADD) is, as in
// PostgreSQL, a unique index (uniqueindex.go) of the same name that the
// constraint owns: the index's constraint flag is set.
//
// Invariants:
//   - A constraint's index is named as PostgreSQL names it: the name
//     written after CONSTRAINT, else table_col1_col2_key with a number
//     after key while the name is taken by a relation, an index or a
//     primary key's index.
//   - The index is the constraint: its catalog record (an index record
//     marked constraint) is what makes it durable. A table's CREATE TABLE
//     text may still name UNIQUE constraints; replaying it creates none,
//     so a dropped constraint stays dropped.
//   - DROP INDEX refuses a constraint's index (2BP01); ALTER TABLE ...
//     DROP CONSTRAINT drops both.

// uniqueConstraintOf returns the unique index, not yet named, that the
// UNIQUE constraint c declares on o; column is the column a column
// constraint is written on, "" for a table constraint.
func uniqueConstraintOf(o *object, c *pg.Constraint, column string) (*index, error) {
	switch {
	case c.Deferrable || c.Initdeferred:
		return nil, errs.New(errs.FeatureNotSupported, "DEFERRABLE UNIQUE constraints are not supported; a UNIQUE constraint is checked at the end of each statement")
	case c.Indexname != "":
		return nil, errs.New(errs.FeatureNotSupported, "UNIQUE USING INDEX is not supported")
	case len(c.Including) > 0:
		return nil, errs.New(errs.FeatureNotSupported, "INCLUDE columns of a UNIQUE constraint are not supported; every index already holds the whole row")
	case len(c.Options) > 0:
		return nil, errs.New(errs.FeatureNotSupported, "index storage parameters (WITH (...)) are not supported")
	case c.Indexspace != "":
		return nil, errs.New(errs.FeatureNotSupported, "tablespaces are not supported")
	case o.unstored:
		return nil, errs.Newf(errs.FeatureNotSupported, "unique indexes on unstored table %q are not supported: it keeps no rows to compare with", o.name)
	}
	names := []string{column}
	if column == "" {
		names = names[:0]
		for _, k := range c.Keys {
			names = append(names, k.GetString_().GetSval())
		}
	}
	ix := &index{rel: o.id, relName: o.name, unique: true, nullsNotDistinct: c.NullsNotDistinct, constraint: true}
	for _, n := range names {
		i := o.colIndex(n)
		if i < 0 {
			return nil, errs.Newf(errs.UndefinedColumn, "column %q named in key does not exist", n)
		}
		if slices.Contains(ix.cols, i) {
			return nil, errs.Newf(errs.DuplicateColumn, "column %q appears twice in unique constraint", n)
		}
		if err := indexableColumn(o, i); err != nil {
			return nil, err
		}
		ix.cols = append(ix.cols, i)
	}
	return ix, nil
}

// namedUnique is a UNIQUE constraint of a CREATE TABLE: its index, and
// the name written after CONSTRAINT ("" when none).
type namedUnique struct {
	ix   *index
	name string
}

// tableUniqueConstraints returns the UNIQUE constraints of the CREATE
// TABLE that made o, in the order written, without those that repeat
// the primary key or an earlier one (as PostgreSQL makes one index of
// them).
func tableUniqueConstraints(o *object, cs *pg.CreateStmt) ([]namedUnique, error) {
	var out []namedUnique
	add := func(c *pg.Constraint, column string) error {
		ix, err := uniqueConstraintOf(o, c, column)
		if err != nil {
			return err
		}
		if slices.Equal(ix.cols, o.pk) && !ix.nullsNotDistinct && c.Conname == "" {
			return nil
		}
		for _, u := range out {
			if slices.Equal(u.ix.cols, ix.cols) && u.ix.nullsNotDistinct == ix.nullsNotDistinct && (u.name == "" || c.Conname == "" || u.name == c.Conname) {
				return nil
			}
		}
		out = append(out, namedUnique{ix: ix, name: c.Conname})
		return nil
	}
	for _, elt := range cs.TableElts {
		if c := elt.GetConstraint(); c != nil && c.Contype == pg.ConstrType_CONSTR_UNIQUE {
			if err := add(c, ""); err != nil {
				return nil, err
			}
			continue
		}
		if cd := elt.GetColumnDef(); cd != nil {
			for _, cn := range cd.Constraints {
				if c := cn.GetConstraint(); c != nil && c.Contype == pg.ConstrType_CONSTR_UNIQUE {
					if err := add(c, cd.Colname); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return out, nil
}

// createTableConstrained runs CREATE TABLE: the table, then the indexes
// of its UNIQUE constraints (empty, as the table is).
func createTableConstrained(st state.Store, cat *catalog, text string, cs *pg.CreateStmt) (*catalog, *Result, error) {
	nc, res, err := createTable(st, cat, text, cs)
	if err != nil || nc == nil {
		return nc, res, err
	}
	name, _ := cat.newObjectKey(cs.Relation)
	o := nc.lookup(name)
	cons, err := tableUniqueConstraints(o, cs)
	if err != nil {
		return nil, nil, err
	}
	if len(cons) > 0 && cat.shard() != nil {
		return nil, nil, unsupportedInShard("a UNIQUE constraint other than the primary key (its rows are in several shards)")
	}
	for _, u := range cons {
		if nc, err = addConstraintIndex(context.Background(), st, nc, o, u.ix, u.name, true); err != nil {
			return nil, nil, err
		}
	}
	return nc, res, nil
}

// addConstraintIndex adds the index of a UNIQUE constraint, building it
// over o's rows unless empty, and failing when its name is taken.
func addConstraintIndex(ctx context.Context, st state.Store, cat *catalog, o *object, ix *index, name string, empty bool) (*catalog, error) {
	sch, _ := cat.splitKey(o.name)
	taken := constraintNames{c: cat, schema: sch}
	if name != "" && taken.relationNameTaken(name) {
		return nil, errs.Newf(errs.DuplicateTable, "relation %q already exists", name)
	}
	if name == "" {
		_, bare := cat.splitKey(o.name)
		name = chooseRelationName(taken, bare, ix.columnNames(o), "key")
	}
	return addIndex(ctx, st, cat, o, ix, name, "key", empty)
}

// constraintNames answers whether a bare name in one schema is taken by
// a relation, an index or a table's primary key index (table_pkey).
type constraintNames struct {
	c      *catalog
	schema string
}

func (n constraintNames) relationNameTaken(name string) bool {
	key := normalizeName(n.schema, name)
	if n.c.relationNameTaken(key) {
		return true
	}
	for _, o := range n.c.byName {
		if o.kind == sql.Table && len(o.pk) > 0 && o.system == nil {
			if sch, bare := n.c.splitKey(o.name); sch == n.schema && bare+"_pkey" == name {
				return true
			}
		}
	}
	return false
}

// isConstraintAlter reports whether at adds or drops constraints, and
// refuses a statement that mixes that with other actions.
func isConstraintAlter(at *pg.AlterTableStmt) (bool, error) {
	n := 0
	for _, c := range at.Cmds {
		switch c.GetAlterTableCmd().GetSubtype() {
		case pg.AlterTableType_AT_AddConstraint, pg.AlterTableType_AT_DropConstraint:
			n++
		}
	}
	if n > 0 && n < len(at.Cmds) {
		return false, errs.New(errs.FeatureNotSupported, "ALTER TABLE adding or dropping constraints together with other actions is not supported; run them as separate statements")
	}
	return n > 0, nil
}

// alterConstraints runs ALTER TABLE o ADD [CONSTRAINT name] UNIQUE (...)
// and ALTER TABLE o DROP CONSTRAINT [IF EXISTS] name, in order.
func alterConstraints(ctx context.Context, st state.Store, cat *catalog, o *object, at *pg.AlterTableStmt, notes *notices) (*catalog, error) {
	nc := cat
	for _, n := range at.Cmds {
		cmd := n.GetAlterTableCmd()
		var err error
		if cmd.Subtype == pg.AlterTableType_AT_DropConstraint {
			nc, err = dropConstraint(st, nc, o, cmd, notes)
		} else {
			nc, err = addConstraint(ctx, st, nc, o, cmd.GetDef().GetConstraint())
		}
		if err != nil {
			return nil, err
		}
	}
	return nc, nil
}

// addConstraint adds a UNIQUE constraint to o, building its index over
// o's rows: duplicates fail it with 23505.
func addConstraint(ctx context.Context, st state.Store, cat *catalog, o *object, c *pg.Constraint) (*catalog, error) {
	switch {
	case c == nil:
		return nil, errs.New(errs.FeatureNotSupported, "this ALTER TABLE ... ADD is not supported")
	case c.Contype == pg.ConstrType_CONSTR_PRIMARY && len(o.pk) > 0:
		return nil, errs.Newf(errs.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", o.name)
	case c.Contype != pg.ConstrType_CONSTR_UNIQUE:
		return nil, errs.Newf(errs.FeatureNotSupported, "ALTER TABLE ... ADD %s is not supported; only UNIQUE constraints can be added", constraintName(c.Contype))
	}
	ix, err := uniqueConstraintOf(o, c, "")
	if err != nil {
		return nil, err
	}
	return addConstraintIndex(ctx, st, cat, o, ix, c.Conname, false)
}

// dropConstraint drops the UNIQUE constraint cmd names, with its index.
func dropConstraint(st state.Store, cat *catalog, o *object, cmd *pg.AlterTableCmd, notes *notices) (*catalog, error) {
	sch, bare := cat.splitKey(o.name)
	if len(o.pk) > 0 && cmd.Name == bare+"_pkey" {
		return nil, errs.New(errs.FeatureNotSupported, "dropping a primary key is not supported; a table's primary key is its stored key")
	}
	ix := cat.indexes[normalizeName(sch, cmd.Name)]
	if ix == nil || !ix.constraint || ix.rel != o.id {
		msg := fmt.Sprintf("constraint %q of relation %q does not exist", cmd.Name, bare)
		if cmd.MissingOk {
			notes.add("00000", msg+", skipping")
			return cat, nil
		}
		return nil, errs.New(errs.UndefinedObject, msg)
	}
	nc := cat.clone()
	if err := dropIndex(st, nc, ix); err != nil {
		return nil, err
	}
	return nc, nil
}

// constraintIndexDrop is the error of DROP INDEX of a constraint's
// index, as PostgreSQL words it.
func constraintIndexDrop(cat *catalog, ix *index) error {
	_, name := cat.splitKey(ix.name)
	_, table := cat.splitKey(ix.relName)
	if o := cat.objectByID(ix.rel); o != nil {
		_, table = cat.splitKey(o.name)
	}
	e := errs.Newf(errs.DependentObjects, "cannot drop index %s because constraint %s on table %s requires it", name, name, table).(*errs.Error)
	e.Hint = fmt.Sprintf("You can drop constraint %s on table %s instead.", name, table)
	return e
}
