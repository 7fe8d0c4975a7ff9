package runtime

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
)

// CREATE TABLE ... AS query and SELECT ... INTO table create a table
// with the query's columns (names, types with their modifiers, no
// constraints or defaults) and fill it with the query's rows, as
// PostgreSQL does: one statement, in one epoch, the command tag SELECT n.
// The table is an ordinary table afterwards: it is recorded as the CREATE
// TABLE statement of its columns, not as the query, which is not
// maintained.

// execCreateTableAs runs CREATE TABLE AS.
func (s *Session) execCreateTableAs(ctx context.Context, cs *pg.CreateTableAsStmt) (*Result, error) {
	return s.ddl(ctx, func(st state.Store, w *epochWrite) (*catalog, *Result, error) {
		return createTableAs(ctx, st, w, cs, s.clock(), s.Zone())
	})
}

// execSelectInto runs SELECT ... INTO table as the CREATE TABLE AS it
// stands for.
func (s *Session) execSelectInto(ctx context.Context, sel *pg.SelectStmt) (*Result, error) {
	q := proto.Clone(sel).(*pg.SelectStmt)
	into := q.IntoClause
	q.IntoClause = nil
	return s.execCreateTableAs(ctx, &pg.CreateTableAsStmt{
		Query:   &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: q}},
		Into:    into,
		Objtype: pg.ObjectType_OBJECT_TABLE,
	})
}

// The query runs once, now, so it reads the statement's clock (now()
// and the others, clock.go).
func createTableAs(ctx context.Context, st state.Store, w *epochWrite, cs *pg.CreateTableAsStmt, clock sql.Clock, zone types.Zone) (*catalog, *Result, error) {
	into := cs.Into
	if w.cat.shard() != nil {
		// Its query would read this shard's part of its relations only.
		return nil, nil, unsupportedInShard("CREATE TABLE AS")
	}
	if into.Rel.Relpersistence == "u" {
		return nil, nil, errs.New(errs.FeatureNotSupported, "UNLOGGED tables are not supported")
	}
	if len(into.Options) > 0 || into.AccessMethod != "" || into.TableSpaceName != "" ||
		into.OnCommit != pg.OnCommitAction_ONCOMMIT_NOOP && into.OnCommit != pg.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED {
		return nil, nil, errs.New(errs.FeatureNotSupported, "CREATE TABLE AS with WITH, USING, TABLESPACE or ON COMMIT is not supported")
	}
	name, nameErr := checkNewName(w.cat, into.Rel)
	if nameErr != nil && !(cs.IfNotExists && errs.CodeOf(nameErr) == errs.DuplicateTable) {
		return nil, nil, nameErr
	}
	b := sql.Binder{Cat: w.cat, Clock: clock, Zone: zone}
	p, err := b.Query(cs.Query)
	if err != nil {
		return nil, nil, err
	}
	if nameErr != nil {
		return nil, &Result{Tag: "CREATE TABLE AS", skipped: existsSkipping(name)}, nil
	}
	cols, err := viewColumns(p, into.ColNames, "too many column names were specified")
	if err != nil {
		return nil, nil, err
	}
	if len(cols) > sql.MaxTableColumns {
		return nil, nil, sql.TooManyTableColumns()
	}
	text := createTableText(name, cols)
	tree, err := parse(text)
	if err != nil {
		return nil, nil, errs.Newf(errs.Internal, "CREATE TABLE AS: the table's definition %q does not parse: %v", text, err)
	}
	c, _, err := createTable(st, w.cat, text, tree.Stmts[0].Stmt.GetCreateStmt())
	if err != nil {
		return nil, nil, err
	}
	if into.SkipData {
		return c, &Result{Tag: "CREATE TABLE AS"}, nil
	}
	rel := &pg.RangeVar{Relname: name, Inh: true, Relpersistence: "p"}
	ins := &pg.InsertStmt{Relation: rel, SelectStmt: cs.Query}
	// The rows go to the new table in the statement's epoch, the catalog
	// the statement's writes see being the one that has it.
	saved := w.cat
	w.cat = c
	res, err := insertRows(ctx, st, w, c.lookup(name), ins, nil, &statementParams{clock: clock})
	w.cat = saved
	if err != nil {
		return nil, nil, err
	}
	n := res.Tag[strings.LastIndexByte(res.Tag, ' ')+1:]
	return c, &Result{Tag: "SELECT " + n}, nil
}

// createTableText is the CREATE TABLE statement of a table with cols.
func createTableText(name string, cols []plan.Column) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", types.QuoteIdent(name))
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", types.QuoteIdent(c.Name), c.Type)
	}
	b.WriteString(")")
	return b.String()
}
