package runtime

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// ALTER TABLE. A statement's actions apply, in order, to a copy of the
// table's definition (alterDefinition, a pure function of the catalog,
// the table and the statement); what the stored rows need is returned
// beside it as rewrite steps, which alterTable runs over the rows
// (alter_rows.go) and start-up never runs: a table's catalog record keeps
// its CREATE TABLE and the ALTER statements since, and replaying them
// rebuilds the definition (the rows were rewritten when the statement
// committed).
//
// Stored rows hold every column of the table (docs/format/rows.md): a row
// is its column count and its values, and every reader of a table's rows
// takes them as the table's columns, so a statement that adds, drops or
// retypes a column rewrites the table's rows, in its epoch, with progress
// reported as a backfill's.

// tableChange is one ALTER TABLE statement applied to a table's
// definition.
type tableChange struct {
	o *object // the table after the statement (a copy)
	// steps rewrite a stored row: each computes the row the next one
	// takes from the row the one before returned; none: rows stay.
	steps [][]plan.Expr
	// notNull are the names of columns whose existing values must not be
	// NULL after the rewrite.
	notNull []string
	// dropped and retyped are the column numbers (attnums) dropped and
	// given another type; views reading them are refused or recomputed.
	dropped, retyped []int
	// droppedNames and retypedNames are their names, for messages.
	droppedNames, retypedNames map[int]string
	cascade                    bool
	notices                    []string
}

// copyTable returns a copy of table o that a change may modify.
func copyTable(o *object) *object {
	n := *o
	n.cols = slices.Clone(o.cols)
	n.notNull = slices.Clone(o.notNull)
	n.defaults = slices.Clone(o.defaults)
	n.pk = slices.Clone(o.pk)
	n.attnums = slices.Clone(o.attnumsOf())
	n.dropped = slices.Clone(o.dropped)
	n.alters = slices.Clone(o.alters)
	if n.nextAttnum == 0 {
		n.nextAttnum = len(o.cols) + 1
	}
	if o.lateness != nil {
		l := *o.lateness
		n.lateness = &l
	}
	return &n
}

// colIndex returns the position of the column named name, or -1.
func (o *object) colIndex(name string) int {
	for i, c := range o.cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// columnRefs returns references to o's columns, the identity rewrite.
func columnRefs(o *object) []plan.Expr {
	out := make([]plan.Expr, len(o.cols))
	for i, c := range o.cols {
		out[i] = &plan.ColRef{Index: i, Name: c.Name, Typ: c.Type}
	}
	return out
}

func noColumn(name, table string) error {
	return errs.Newf(errs.UndefinedColumn, "column %q of relation %q does not exist", name, table)
}

// alterDefinition applies at's actions to a copy of table o.
func alterDefinition(cat *catalog, o *object, at *pg.AlterTableStmt) (*tableChange, error) {
	t := copyTable(o)
	ch := &tableChange{o: t, droppedNames: map[int]string{}, retypedNames: map[int]string{}}
	b := sql.Binder{Cat: cat}
	for _, n := range at.Cmds {
		cmd := n.GetAlterTableCmd()
		if cmd == nil {
			return nil, errs.New(errs.FeatureNotSupported, "this ALTER TABLE action is not supported")
		}
		if err := applyAlterCmd(&b, ch, t, cmd); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

func applyAlterCmd(b *sql.Binder, ch *tableChange, t *object, cmd *pg.AlterTableCmd) error {
	switch cmd.Subtype {
	case pg.AlterTableType_AT_AddColumn:
		return addColumn(b, ch, t, cmd)
	case pg.AlterTableType_AT_DropColumn:
		return dropColumn(ch, t, cmd)
	case pg.AlterTableType_AT_ColumnDefault:
		i := t.colIndex(cmd.Name)
		if i < 0 {
			return noColumn(cmd.Name, t.name)
		}
		if cmd.Def == nil {
			t.defaults[i] = nil
			return nil
		}
		def, err := bindDefault(b, cmd.Def, t.cols[i].Type, cmd.Name)
		if err != nil {
			return err
		}
		t.defaults[i] = def
		return nil
	case pg.AlterTableType_AT_SetNotNull:
		i := t.colIndex(cmd.Name)
		if i < 0 {
			return noColumn(cmd.Name, t.name)
		}
		if !t.notNull[i] {
			t.notNull[i] = true
			ch.notNull = append(ch.notNull, cmd.Name)
		}
		return nil
	case pg.AlterTableType_AT_DropNotNull:
		i := t.colIndex(cmd.Name)
		if i < 0 {
			return noColumn(cmd.Name, t.name)
		}
		if slices.Contains(t.pk, i) {
			return errs.Newf(errs.InvalidTableDefinition, "column %q is in a primary key", cmd.Name)
		}
		t.notNull[i] = false
		return nil
	case pg.AlterTableType_AT_AlterColumnType:
		return alterColumnType(b, ch, t, cmd)
	}
	return errs.Newf(errs.FeatureNotSupported, "ALTER TABLE ... %s is not supported", alterCmdName(cmd.Subtype))
}

// alterCmdName names an ALTER TABLE action as a user writes it.
func alterCmdName(t pg.AlterTableType) string {
	s := strings.TrimPrefix(t.String(), "AT_")
	var out []byte
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			out = append(out, ' ')
		}
		out = append(out, byte(r))
	}
	return strings.ToUpper(string(out))
}

func addColumn(b *sql.Binder, ch *tableChange, t *object, cmd *pg.AlterTableCmd) error {
	cd := cmd.Def.GetColumnDef()
	if cd == nil {
		return errs.New(errs.FeatureNotSupported, "this ADD COLUMN is not supported")
	}
	if t.colIndex(cd.Colname) >= 0 {
		msg := fmt.Sprintf("column %q of relation %q already exists", cd.Colname, t.name)
		if cmd.MissingOk {
			ch.notices = append(ch.notices, msg+", skipping")
			return nil
		}
		return errs.New(errs.DuplicateColumn, msg)
	}
	if len(t.cols)+len(t.dropped) >= sql.MaxTableColumns {
		return sql.TooManyTableColumns()
	}
	typ, err := typeOf(cd.TypeName)
	if err != nil {
		return err
	}
	if err := checkStoredType(typ); err != nil {
		return err
	}
	if err := sql.CheckColumnCollation(cd.CollClause, typ); err != nil {
		return err
	}
	notNull := cd.IsNotNull
	var def plan.Expr
	for _, cn := range cd.Constraints {
		c := cn.GetConstraint()
		switch c.Contype {
		case pg.ConstrType_CONSTR_NOTNULL:
			notNull = true
		case pg.ConstrType_CONSTR_NULL:
		case pg.ConstrType_CONSTR_DEFAULT:
			if def, err = bindDefault(b, c.RawExpr, typ, cd.Colname); err != nil {
				return err
			}
		default:
			return errs.Newf(errs.FeatureNotSupported, "column constraint %s is not supported in ADD COLUMN", constraintName(c.Contype))
		}
	}
	step := columnRefs(t)
	var fill plan.Expr = &plan.Const{Val: types.Null, Typ: typ}
	if def != nil {
		fill = def
	}
	step = append(step, fill)
	ch.steps = append(ch.steps, step)
	t.cols = append(t.cols, plan.Column{Name: cd.Colname, Type: typ})
	t.notNull = append(t.notNull, notNull)
	t.defaults = append(t.defaults, def)
	t.attnums = append(t.attnums, t.nextAttnum)
	t.nextAttnum++
	if notNull {
		ch.notNull = append(ch.notNull, cd.Colname)
	}
	return nil
}

func dropColumn(ch *tableChange, t *object, cmd *pg.AlterTableCmd) error {
	i := t.colIndex(cmd.Name)
	if i < 0 {
		if cmd.MissingOk {
			ch.notices = append(ch.notices, fmt.Sprintf("column %q of relation %q does not exist, skipping", cmd.Name, t.name))
			return nil
		}
		return noColumn(cmd.Name, t.name)
	}
	if slices.Contains(t.pk, i) {
		return errs.Newf(errs.FeatureNotSupported, "cannot drop column %s of table %s: dropping a primary-key column is not supported", cmd.Name, t.name)
	}
	if t.lateness != nil && t.lateness.col == i {
		return errs.Newf(errs.FeatureNotSupported, "cannot drop column %s of table %s: it is the table's event-time column", cmd.Name, t.name)
	}
	if cmd.Behavior == pg.DropBehavior_DROP_CASCADE {
		ch.cascade = true
	}
	step := columnRefs(t)
	ch.steps = append(ch.steps, slices.Delete(step, i, i+1))
	a := t.attnums[i]
	ch.dropped = append(ch.dropped, a)
	ch.droppedNames[a] = cmd.Name
	t.dropped = append(t.dropped, a)
	t.cols = slices.Delete(t.cols, i, i+1)
	t.notNull = slices.Delete(t.notNull, i, i+1)
	t.defaults = slices.Delete(t.defaults, i, i+1)
	t.attnums = slices.Delete(t.attnums, i, i+1)
	for k, p := range t.pk {
		if p > i {
			t.pk[k] = p - 1
		}
	}
	if t.lateness != nil && t.lateness.col > i {
		t.lateness.col--
	}
	return nil
}

func alterColumnType(b *sql.Binder, ch *tableChange, t *object, cmd *pg.AlterTableCmd) error {
	i := t.colIndex(cmd.Name)
	if i < 0 {
		return noColumn(cmd.Name, t.name)
	}
	cd := cmd.Def.GetColumnDef()
	if cd == nil || cd.TypeName == nil {
		return errs.New(errs.FeatureNotSupported, "this ALTER COLUMN TYPE is not supported")
	}
	typ, err := typeOf(cd.TypeName)
	if err != nil {
		return err
	}
	if err := checkStoredType(typ); err != nil {
		return err
	}
	if err := sql.CheckColumnCollation(cd.CollClause, typ); err != nil {
		return err
	}
	if t.lateness != nil && t.lateness.col == i {
		return errs.Newf(errs.FeatureNotSupported, "cannot alter type of column %s of table %s: it is the table's event-time column", cmd.Name, t.name)
	}
	step := columnRefs(t)
	if cd.RawDefault != nil {
		sc := b.TableScope(t.name, "", t.cols)
		e, err := b.Scalar(sc, cd.RawDefault)
		if err != nil {
			return err
		}
		if e, err = sql.Coerce(e, typ, cmd.Name); err != nil {
			if errs.CodeOf(err) == errs.DatatypeMismatch {
				return errs.Newf(errs.DatatypeMismatch, "result of USING clause for column %q cannot be cast automatically to type %s", cmd.Name, typ)
			}
			return err
		}
		step[i] = e
	} else {
		e, err := sql.Coerce(step[i], typ, cmd.Name)
		if err != nil {
			if errs.CodeOf(err) == errs.DatatypeMismatch {
				e := errs.Newf(errs.DatatypeMismatch, "column %q cannot be cast automatically to type %s", cmd.Name, typ).(*errs.Error)
				e.Hint = fmt.Sprintf("You might need to specify \"USING %s::%s\".", cmd.Name, typ)
				return e
			}
			return err
		}
		step[i] = e
	}
	if d := t.defaults[i]; d != nil {
		var nd plan.Expr
		if cd, ok := d.(*clockDefault); ok {
			nd, err = bindDefault(b, cd.raw, typ, cmd.Name)
		} else {
			nd, err = sql.Coerce(d, typ, cmd.Name)
		}
		if err != nil {
			return errs.Newf(errs.DatatypeMismatch, "default for column %q cannot be cast automatically to type %s", cmd.Name, typ)
		}
		t.defaults[i] = nd
	}
	ch.steps = append(ch.steps, step)
	a := t.attnums[i]
	ch.retyped = append(ch.retyped, a)
	ch.retypedNames[a] = cmd.Name
	t.cols[i].Type = typ
	return nil
}
