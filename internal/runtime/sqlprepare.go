package runtime

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/types"
)

// SQL-level prepared statements: PREPARE name [(types)] AS statement,
// EXECUTE name [(values)] and DEALLOCATE [PREPARE] name | ALL, as in
// PostgreSQL. A statement prepared this way lives until DEALLOCATE or the
// end of the session; it is bound again, against the catalog as it is
// then, each time it runs (as ExecPrepared does), with EXECUTE's values
// evaluated as the parameters' types. The wire protocol's
// prepared statements (Parse) are kept by the gateway, in a namespace of
// their own. session.Prepared keeps the session's.

// preparedStatement runs PREPARE, EXECUTE and DEALLOCATE; handled is false
// for any other statement.
//
// version is the parse tree's version, which printing a node back needs.
func (s *Session) preparedStatement(ctx context.Context, version int32, n *pg.Node) (res *Result, handled bool, err error) {
	switch {
	case n.GetPrepareStmt() != nil:
		res, err = s.prepareSQL(version, n.GetPrepareStmt())
	case n.GetExecuteStmt() != nil:
		res, err = s.executeSQL(ctx, version, n.GetExecuteStmt())
	case n.GetDeallocateStmt() != nil:
		res, err = s.deallocateSQL(n.GetDeallocateStmt())
	default:
		return nil, false, nil
	}
	if err != nil && s.txn != nil && s.txn.Block() {
		s.txn.Fail()
	}
	return res, true, err
}

func (s *Session) prepareSQL(version int32, st *pg.PrepareStmt) (*Result, error) {
	if err := s.CheckNotFailed(); err != nil {
		return nil, err
	}
	if err := s.sqlPrepared.CheckNew(st.Name); err != nil {
		return nil, err
	}
	declared := make([]types.Type, len(st.Argtypes))
	for i, a := range st.Argtypes {
		t, err := sql.TypeOf(a.GetTypeName())
		if err != nil {
			return nil, err
		}
		declared[i] = t
	}
	text, err := pg.Deparse(&pg.ParseResult{Version: version, Stmts: []*pg.RawStmt{{Stmt: st.Query}}})
	if err != nil {
		return nil, errs.Newf(errs.Internal, "internal error: printing the prepared statement: %v", err)
	}
	p, err := s.Prepare(text, declared)
	if err != nil {
		return nil, err
	}
	s.sqlPrepared.Add(st.Name, p)
	return &Result{Tag: "PREPARE"}, nil
}

// executeSQL evaluates EXECUTE's values, each as its parameter's type, and
// runs the prepared statement with them.
func (s *Session) executeSQL(ctx context.Context, version int32, st *pg.ExecuteStmt) (*Result, error) {
	if err := s.CheckNotFailed(); err != nil {
		return nil, err
	}
	p, err := s.sqlPrepared.Get(st.Name)
	if err != nil {
		return nil, err
	}
	if len(st.Params) != len(p.ParamTypes) {
		e := errs.Newf(errs.SyntaxError, "wrong number of parameters for prepared statement %q", st.Name).(*errs.Error)
		e.Detail = fmt.Sprintf("Expected %d parameters but got %d.", len(p.ParamTypes), len(st.Params))
		return nil, e
	}
	vals := make([]types.Value, len(st.Params))
	for i, e := range st.Params {
		v, err := s.evalParam(ctx, version, e, p.ParamTypes[i])
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return s.ExecPrepared(ctx, p, vals)
}

// evalParam evaluates one of EXECUTE's values as type t.
func (s *Session) evalParam(ctx context.Context, version int32, e *pg.Node, t types.Type) (types.Value, error) {
	sel, err := pg.Deparse(&pg.ParseResult{Version: version, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(e, 0)}}}}}}})
	if err != nil || !strings.HasPrefix(sel, "SELECT ") {
		return types.Null, errs.Newf(errs.Internal, "internal error: printing a parameter of EXECUTE: %v", err)
	}
	q := fmt.Sprintf("SELECT CAST((%s) AS %s)", strings.TrimPrefix(sel, "SELECT "), t)
	res, err := s.exec(ctx, ParseStatement(q), nil)
	if err != nil {
		return types.Null, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return types.Null, nil
	}
	return res.Rows[0][0], nil
}

func (s *Session) deallocateSQL(st *pg.DeallocateStmt) (*Result, error) {
	if err := s.CheckNotFailed(); err != nil {
		return nil, err
	}
	if st.Isall {
		s.sqlPrepared.RemoveAll()
		return &Result{Tag: "DEALLOCATE ALL"}, nil
	}
	if err := s.sqlPrepared.Remove(st.Name); err != nil {
		return nil, err
	}
	return &Result{Tag: "DEALLOCATE"}, nil
}
