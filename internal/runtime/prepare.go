package runtime

import (
	"context"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"google.golang.org/protobuf/proto"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/session"
	"github.com/rockstream/rockstream/internal/sql"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/sql/pgparse"
	"github.com/rockstream/rockstream/internal/types"
)

// Prepared is a statement parsed and bound without running: what the
// extended query protocol's Describe reports.
type Prepared struct {
	// Query is the statement's text.
	Query string
	// ParamTypes are the types of $1..$n: the declared ones, and those
	// inferred for the others.
	ParamTypes []types.Type
	// Columns describes the rows the statement returns; nil when it
	// returns none or when RowsUnknown.
	Columns []Column
	// RowsUnknown is set for statements whose rows are known only once
	// they run: COPY and SUBSCRIBE (streams), and a FETCH from a cursor
	// not declared yet.
	RowsUnknown bool

	// parsed is Query parsed, kept from the first execution for the
	// next: parsing depends on the text alone, and the tree is only
	// read. Binding still happens at every execution, against the
	// catalog of the moment, except for an INSERT whose binding insert
	// keeps and a SELECT whose plan sel keeps (each nil for other
	// statements).
	parsed *Statement
	insert *insertCache
	sel    *selectCache
}

// Prepare parses and binds query, a single statement, against the catalog
// the session sees, without running it. paramTypes declares the types of
// the first parameters (an Unknown entry, or a parameter past the list, is
// inferred from its use); a parameter whose type cannot be inferred fails
// with 42P18, as in PostgreSQL.
//
// SELECT, INSERT, UPDATE and DELETE (and their RETURNING lists) are bound
// fully; other statements are only parsed, and describe the rows they
// return when that does not depend on running them (SHOW, EXPLAIN
// INCREMENTAL). Nothing is locked or written.
//
// A panic while binding is the statement's error (XX000).
func (s *Session) Prepare(query string, paramTypes []types.Type) (*Prepared, error) {
	return guard(s.eng, func() (*Prepared, error) { return s.prepare(query, paramTypes) })
}

func (s *Session) prepare(query string, paramTypes []types.Type) (*Prepared, error) {
	p := &Prepared{Query: query}
	declared := append([]types.Type(nil), paramTypes...)
	if st := ext.Parse(query); st.Kind != ext.None {
		if err := s.CheckNotFailed(); err != nil {
			return nil, err
		}
		switch st.Kind {
		case ext.ExplainIncremental:
			p.Columns = []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}
			p.ParamTypes = declared
			return p, p.checkParams()
		case ext.AsOfEpoch:
		case ext.Fetch:
			p.ParamTypes = declared
			s.describeFetch(p, st.Query)
			return p, p.checkParams()
		case ext.Subscribe:
			if st.Err != nil {
				return nil, st.Err
			}
			// A SUBSCRIBE's rows are its view's, behind its own columns.
			p.ParamTypes = declared
			o := s.resolveIn(s.catalog(), st.Name)
			if o == nil || o.kind != sql.MaterializedView {
				p.RowsUnknown = true // running it reports the error
			} else {
				p.Columns = subscriptionColumns(o, st.Progress)
			}
			return p, p.checkParams()
		default:
			if st.Err != nil {
				return nil, st.Err
			}
			p.ParamTypes, p.RowsUnknown = declared, true
			return p, p.checkParams()
		}
		tree, err := pgparse.Parse(st.Query)
		if err != nil {
			return nil, parseError(err)
		}
		if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
			return nil, errs.New(errs.SyntaxError, "AS OF EPOCH follows one SELECT")
		}
		return p, s.describe(p, tree.Stmts[0].Stmt, declared)
	}
	tree, err := pgparse.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	switch len(tree.Stmts) {
	case 0:
		p.ParamTypes = declared
		return p, nil
	case 1:
	default:
		return nil, errs.New(errs.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	n := tree.Stmts[0].Stmt
	if n.GetTransactionStmt() == nil {
		if err := s.CheckNotFailed(); err != nil {
			return nil, err
		}
	}
	return p, s.describe(p, n, declared)
}

// describe binds statement n of p with the declared parameter types and
// fills in p's parameter types and columns.
func (s *Session) describe(p *Prepared, n *pg.Node, declared []types.Type) error {
	cat := s.catalog()
	// Every parameter the statement names gets a slot, so that LIMIT $1,
	// evaluated while binding, finds one (NULL: no limit), and one never
	// named stays Unknown and is reported as PostgreSQL does.
	if m := maxParamRef(n); m > len(declared) {
		declared = append(declared, make([]types.Type, m-len(declared))...)
	}
	var pt []types.Type
	switch {
	case n.GetSelectStmt() != nil:
		// A query binds against the catalog as the session sees it
		// (system functions, per-row subqueries), as execSelect does.
		r, view, done, err := s.readView(context.Background())
		if err != nil {
			return err
		}
		defer done()
		b := newBinder(view.withSession(context.Background(), s.sessionInfo(), r), nil, s.describeParams(declared))
		q, err := b.Query(n)
		if err != nil {
			return err
		}
		p.Columns, pt = outColumns(q.Columns()), b.ParamTypes
	case n.GetInsertStmt() != nil:
		ins := n.GetInsertStmt()
		o, err := targetTable(cat, ins.Relation)
		if err != nil {
			return err
		}
		bi, err := bindInsert(cat, o, ins, nil, s.describeParams(declared))
		if err != nil {
			return err
		}
		pt = bi.b.ParamTypes[:bi.nUser]
		if bi.ret != nil {
			p.Columns = bi.ret.cols
		}
	case n.GetUpdateStmt() != nil:
		up := n.GetUpdateStmt()
		t, err := bindTarget(cat, up.Relation, up.WhereClause, nil, s.describeParams(declared))
		if err != nil {
			return err
		}
		if _, _, err := bindUpdateSets(t.b, t.sc, t.o, up); err != nil {
			return err
		}
		ret, err := bindReturning(t.b, t.sc, t.o, up.ReturningList)
		if err != nil {
			return err
		}
		if ret != nil {
			p.Columns = ret.cols
		}
		pt = t.b.ParamTypes
	case n.GetDeleteStmt() != nil:
		del := n.GetDeleteStmt()
		t, err := bindTarget(cat, del.Relation, del.WhereClause, nil, s.describeParams(declared))
		if err != nil {
			return err
		}
		ret, err := bindReturning(t.b, t.sc, t.o, del.ReturningList)
		if err != nil {
			return err
		}
		if ret != nil {
			p.Columns = ret.cols
		}
		pt = t.b.ParamTypes
	case n.GetFetchStmt() != nil:
		s.describeFetch(p, p.Query)
		pt = declared
	case n.GetCopyStmt() != nil:
		p.RowsUnknown = true
		pt = declared
	case n.GetExplainStmt() != nil:
		p.Columns = []Column{{Name: "QUERY PLAN", Type: types.Of(types.Text)}}
		pt = declared
		if q := n.GetExplainStmt().Query; q.GetSelectStmt() != nil {
			var inner Prepared
			if err := s.describe(&inner, q, declared); err != nil {
				return err
			}
			pt = inner.ParamTypes
		}
	case n.GetVariableShowStmt() != nil:
		name := strings.ToLower(n.GetVariableShowStmt().Name)
		p.Columns = []Column{{Name: session.DisplayName(name), Type: types.Of(types.Text)}}
		if name == "all" {
			p.Columns = showAllColumns
		}
		pt = declared
	default:
		pt = declared
	}
	p.ParamTypes = append([]types.Type(nil), pt...)
	return p.checkParams()
}

// checkParams fails when a parameter's type is still unknown.
func (p *Prepared) checkParams() error {
	for i, t := range p.ParamTypes {
		if t.ID == types.Unknown {
			return errs.Newf(errs.IndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	return nil
}

// catalog returns the catalog the session's statements see: its
// transaction block's, once the block has written, else the committed one.
func (s *Session) catalog() *catalog {
	if s.txn != nil && s.txn.w != nil {
		return s.txn.w.cat
	}
	s.eng.mu.RLock()
	defer s.eng.mu.RUnlock()
	return s.eng.mu.cat
}

// CheckNotFailed fails with 25P02 when the session is in a failed
// transaction block, where only its end is accepted.
func (s *Session) CheckNotFailed() error {
	if s.txn != nil && s.txn.Failed() {
		return errs.New(errs.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	return nil
}

// ExecPrepared runs a prepared statement with its parameters' values,
// one for each of p.ParamTypes and of that type (types.Null for NULL), as
// DecodeParam and types.ParseBinary return them: nothing is parsed from
// text again. The statement is bound again, against the catalog as it is
// now, but for an INSERT of VALUES rows of parameters and literals, whose
// binding is kept while the catalog does not change (insertplan.go), and
// a SELECT, whose plan and circuit are kept while the catalog and the
// session settings binding reads do not change (selectplan.go).
func (s *Session) ExecPrepared(ctx context.Context, p *Prepared, params []types.Value) (*Result, error) {
	if len(params) != len(p.ParamTypes) {
		return nil, errs.Newf(errs.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(p.ParamTypes))
	}
	if p.parsed == nil {
		p.parsed = ParseStatement(p.Query)
		p.insert = newInsertCache(p.parsed)
		p.sel = newSelectCache(p.parsed)
	}
	s.declared = &statementParams{types: p.ParamTypes, values: params, insert: p.insert, sel: p.sel}
	defer func() { s.declared = nil }()
	return s.ExecStatement(ctx, p.parsed, nil)
}

// DecodeParam reads a parameter's value from its text, as t's input
// function does; an OID alias type's name ('orders' as a regclass) is
// looked up in the catalog the session sees.
func (s *Session) DecodeParam(ctx context.Context, t types.Type, text string) (types.Value, error) {
	if !types.IsReg(t.ID) && !(t.ID.IsArray() && types.IsReg(t.ID.Elem())) {
		return types.ParseZone(t, text, s.datedZone())
	}
	return guard(s.eng, func() (types.Value, error) {
		r, view, done, err := s.readView(ctx)
		if err != nil {
			return types.Null, err
		}
		defer done()
		return parseParam(view.withSession(ctx, s.sessionInfo(), r), t, text, s.datedZone())
	})
}

// TxnStatus returns the session's transaction status as the wire protocol's
// ReadyForQuery reports it: 'I' idle, 'T' in a transaction block, 'E' in a
// failed transaction block.
func (s *Session) TxnStatus() byte {
	switch {
	case !s.txn.explicit():
		return 'I'
	case s.txn.Failed():
		return 'E'
	}
	return 'T'
}

// Notice is a message to the client that is not an error, such as the
// warning for BEGIN inside a transaction block.
type Notice struct {
	Severity string // WARNING, NOTICE, ...
	SQLState string
	Message  string
}

// OnNotice sets the function that receives the session's notices; nil
// discards them.
func (s *Session) OnNotice(fn func(Notice)) { s.onNotice = fn }

func (s *Session) notice(severity string, code errs.Code, msg string) {
	if s.onNotice != nil {
		s.onNotice(Notice{Severity: severity, SQLState: errs.SQLState(errs.New(code, msg)), Message: msg})
	}
}

// maxParamRef returns the highest parameter number ($n) in a statement.
func maxParamRef(m proto.Message) int {
	n := 0
	pgWalk(m, func(x any) {
		if p, ok := x.(*pg.ParamRef); ok && int(p.Number) > n {
			n = int(p.Number)
		}
	})
	return n
}

// insertParamRefs is maxParamRef of an INSERT, answered without walking
// the tree of an INSERT of literal rows (the bulk-loading case, whose
// tree is large and holds no parameter).
func insertParamRefs(ins *pg.InsertStmt) int {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || ins.OnConflictClause != nil || len(ins.ReturningList) > 0 || ins.WithClause != nil ||
		len(sel.ValuesLists) == 0 || sel.WithClause != nil || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.SortClause) > 0 {
		return maxParamRef(ins)
	}
	for _, row := range sel.ValuesLists {
		for _, v := range row.GetList().GetItems() {
			if tc := v.GetTypeCast(); tc != nil && tc.TypeName != nil && len(tc.TypeName.Typmods) == 0 {
				v = tc.Arg
			}
			if v.GetAConst() == nil && v.GetSetToDefault() == nil {
				return maxParamRef(ins)
			}
		}
	}
	return 0
}

// describeFetch describes a FETCH by its cursor's columns, as PostgreSQL
// does (MOVE returns no rows); a FETCH of a cursor not declared yet is
// described when it runs.
func (s *Session) describeFetch(p *Prepared, fetch string) {
	tree, err := pgparse.Parse(fetch)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetFetchStmt() == nil {
		p.RowsUnknown = true
		return
	}
	f := tree.Stmts[0].Stmt.GetFetchStmt()
	if f.Ismove {
		return
	}
	if c, ok := s.cursors.Lookup(f.Portalname); ok {
		p.Columns = c.cols
		return
	}
	p.RowsUnknown = true
}
