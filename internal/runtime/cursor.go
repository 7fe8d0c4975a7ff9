package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// A cursor is a query's result read a few rows at a time with FETCH. It
// lives in a transaction block and is closed when the block ends, as
// PostgreSQL's cursors WITHOUT HOLD are (session.Cursors keeps them). A
// cursor over a SELECT holds the rows of the query as of DECLARE; a
// cursor over SUBSCRIBE reads the view's changes as they are committed,
// FETCH waiting for them.
type cursor struct {
	cols []Column
	rows []zset.Row    // a SELECT's rows not fetched yet
	sub  *subscription // a SUBSCRIBE's, or nil
}

// Close implements session.Cursor: it ends a SUBSCRIBE cursor's
// subscription.
func (c *cursor) Close() {
	if c.sub != nil {
		c.sub.close()
	}
}

// declareCursor checks a DECLARE's name and options.
func (s *Session) declareCursor(d *pg.DeclareCursorStmt) error {
	return s.cursors.CheckDeclare(d, s.txn.Block())
}

func (s *Session) addCursor(name string, c *cursor) *Result {
	s.cursors.Add(name, c)
	return &Result{Tag: "DECLARE CURSOR"}
}

// execDeclare declares a cursor over a SELECT.
func (s *Session) execDeclare(ctx context.Context, d *pg.DeclareCursorStmt, paramText []*string) (*Result, error) {
	if err := s.declareCursor(d); err != nil {
		return nil, err
	}
	if d.Query.GetSelectStmt() == nil {
		return nil, errs.New(errs.FeatureNotSupported, "a cursor reads a SELECT or a SUBSCRIBE")
	}
	res, err := s.execSelect(ctx, d.Query, paramText)
	if err != nil {
		return nil, err
	}
	return s.addCursor(d.Portalname, &cursor{cols: res.Columns, rows: res.Rows}), nil
}

// declareExt declares a cursor over SUBSCRIBE or a SELECT AS OF EPOCH.
func (s *Session) declareExt(ctx context.Context, st ext.Statement, paramText []*string) (*Result, error) {
	tree, err := pgparse.Parse(st.Query + " SELECT 1")
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetDeclareCursorStmt() == nil {
		return nil, errs.Newf(errs.SyntaxError, "syntax error in %q", st.Query)
	}
	d := tree.Stmts[0].Stmt.GetDeclareCursorStmt()
	if err := s.declareCursor(d); err != nil {
		return nil, err
	}
	if st.Inner.Kind == ext.AsOfEpoch {
		res, err := s.execSelectAsOf(ctx, st.Inner.Query, st.Inner.Epoch, paramText)
		if err != nil {
			return nil, err
		}
		return s.addCursor(d.Portalname, &cursor{cols: res.Columns, rows: res.Rows}), nil
	}
	if s.txn.wrote() {
		return nil, errs.New(errs.FeatureNotSupported, "a SUBSCRIBE cursor cannot be declared in a transaction block that has written; declare it in a block of its own")
	}
	inner := *st.Inner
	inner.Name = s.resolveKey(inner.Name)
	sub, err := s.eng.subscribe(inner)
	if err != nil {
		return nil, err
	}
	s.txn.Subscribed()
	return s.addCursor(d.Portalname, &cursor{cols: subscriptionColumns(sub.view, sub.progress), sub: sub}), nil
}

// fetchExt runs FETCH or MOVE with a timeout.
func (s *Session) fetchExt(ctx context.Context, st ext.Statement) (*Result, error) {
	tree, err := pgparse.Parse(st.Query)
	if err != nil {
		return nil, parseError(err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetFetchStmt() == nil {
		return nil, errs.New(errs.SyntaxError, "WITH (TIMEOUT ...) follows FETCH or MOVE")
	}
	iv, err := types.ParseInterval(st.Timeout)
	if err != nil {
		return nil, err
	}
	if iv.Months != 0 || iv.Days < 0 || iv.Micros < 0 || iv.Days > 24 {
		return nil, errs.Newf(errs.InvalidParameterValue, "FETCH timeout %q must be between 0 and 24 days", st.Timeout)
	}
	timeout := time.Duration(iv.Days)*24*time.Hour + time.Duration(iv.Micros)*time.Microsecond
	return s.execFetch(ctx, tree.Stmts[0].Stmt.GetFetchStmt(), timeout, true)
}

// execFetch runs FETCH or MOVE. Over a SUBSCRIBE cursor it waits until at
// least one row is available (at most timeout, when hasTimeout), then
// returns up to the count asked for.
func (s *Session) execFetch(ctx context.Context, f *pg.FetchStmt, timeout time.Duration, hasTimeout bool) (*Result, error) {
	c, err := s.cursors.Get(f.Portalname)
	if err != nil {
		return nil, err
	}
	if f.Direction != pg.FetchDirection_FETCH_FORWARD || f.HowMany < 0 {
		return nil, errs.New(errs.PrerequisiteState, "cursor can only scan forward")
	}
	if f.HowMany == 0 {
		return nil, errs.New(errs.FeatureNotSupported, "FETCH 0 and MOVE 0 (the current row again) are not supported; cursors read forward only")
	}
	n := f.HowMany
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	var rows []zset.Row
	switch {
	case c.sub != nil:
		wctx := ctx
		if hasTimeout {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		got, err := c.sub.take(wctx, int(n))
		switch {
		case err == nil:
			rows = got
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			// The timeout elapsed with nothing new: no rows.
		case ctx.Err() != nil:
			return nil, canceled(ctx)
		default:
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
		}
	case c.sub == nil:
		if int64(len(c.rows)) < n {
			n = int64(len(c.rows))
		}
		rows, c.rows = c.rows[:n:n], c.rows[n:]
	}
	if f.Ismove {
		return &Result{Tag: fmt.Sprintf("MOVE %d", len(rows))}, nil
	}
	return &Result{Columns: c.cols, Rows: rows, Tag: fmt.Sprintf("FETCH %d", len(rows))}, nil
}

// execClose closes one cursor, or all with CLOSE ALL.
func (s *Session) execClose(c *pg.ClosePortalStmt) (*Result, error) {
	if c.Portalname == "" {
		s.closeCursors()
		return &Result{Tag: "CLOSE CURSOR ALL"}, nil
	}
	if err := s.cursors.Close(c.Portalname); err != nil {
		return nil, err
	}
	return &Result{Tag: "CLOSE CURSOR"}, nil
}

// closeCursors closes every cursor of the session.
func (s *Session) closeCursors() { s.cursors.CloseAll() }

// writeStmtName names a statement that writes, for the error of a write
// in a read-only block; "" for one that does not.
func writeStmtName(n *pg.Node) string {
	switch {
	case n.GetInsertStmt() != nil:
		return "INSERT"
	case n.GetUpdateStmt() != nil:
		return "UPDATE"
	case n.GetDeleteStmt() != nil:
		return "DELETE"
	case n.GetTruncateStmt() != nil:
		return "TRUNCATE TABLE" // PostgreSQL's name for it here
	case n.GetCopyStmt() != nil && n.GetCopyStmt().IsFrom:
		return "COPY FROM"
	case n.GetCreateStmt() != nil:
		return "CREATE TABLE"
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_TABLE:
		return "CREATE TABLE AS"
	case n.GetCreateTableAsStmt() != nil:
		return "CREATE MATERIALIZED VIEW"
	case n.GetSelectStmt() != nil && n.GetSelectStmt().IntoClause != nil:
		return "SELECT INTO"
	case n.GetViewStmt() != nil:
		return "CREATE VIEW"
	case n.GetCommentStmt() != nil:
		return "COMMENT"
	case n.GetCreateFunctionStmt() != nil:
		return "CREATE FUNCTION"
	case n.GetIndexStmt() != nil:
		return "CREATE INDEX"
	case n.GetDropStmt() != nil:
		return "DROP " + strings.ReplaceAll(strings.TrimPrefix(n.GetDropStmt().RemoveType.String(), "OBJECT_"), "MATVIEW", "MATERIALIZED VIEW")
	case n.GetCreateRoleStmt() != nil:
		return "CREATE ROLE"
	case n.GetAlterRoleStmt() != nil, n.GetAlterRoleSetStmt() != nil:
		return "ALTER ROLE"
	case n.GetAlterDatabaseSetStmt() != nil:
		return "ALTER DATABASE"
	case n.GetDropRoleStmt() != nil:
		return "DROP ROLE"
	}
	return ""
}
