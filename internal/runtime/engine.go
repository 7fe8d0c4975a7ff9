package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/plan"
	"github.com/rockstream/rockstream/internal/sql/ext"
	"github.com/rockstream/rockstream/internal/state"
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// Engine is one RockStream instance.
type Engine struct {
	// writeToken is held by the one transaction allowed to write.
	writeToken chan struct{}

	// mu guards the committed state: readers hold it shared for the whole
	// read; a commit holds it exclusively while it applies a transaction.
	mu struct {
		sync.RWMutex
		store state.Store
		cat   *catalog
		epoch uint64
	}
}

// Open returns an empty in-memory engine.
func Open() *Engine {
	e := &Engine{writeToken: make(chan struct{}, 1)}
	e.mu.store = state.NewMemory()
	e.mu.cat = newCatalog()
	return e
}

// Epoch returns the last committed epoch.
func (e *Engine) Epoch() uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mu.epoch
}

// Column is one result column.
type Column struct {
	Name string
	Type types.Type
}

// Result is the outcome of one statement.
type Result struct {
	// Columns is nil for a statement that returns no rows.
	Columns []Column
	Rows    []zset.Row
	Tag     string
}

// Session is one client's sequence of statements.
type Session struct {
	eng *Engine
	txn *txn // nil outside a transaction block
}

// txnState says where a transaction block stands.
type txnState uint8

const (
	txnOpen   txnState = iota
	txnFailed          // a statement failed: only ROLLBACK/COMMIT accepted
)

// txn is an open transaction block (or the implicit transaction of one
// statement).
type txn struct {
	state txnState
	block bool // an explicit BEGIN ... COMMIT
	// ov holds the transaction's writes; nil until the first write, when
	// the write token is taken.
	ov  *state.Overlay
	cat *catalog // the catalog the transaction sees
}

// NewSession returns a session of e.
func (e *Engine) NewSession() *Session { return &Session{eng: e} }

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() {
	if s.txn != nil {
		s.rollback()
	}
}

// InTransaction reports whether a transaction block is open.
func (s *Session) InTransaction() bool { return s.txn != nil && s.txn.block }

// Exec parses and runs one statement. params are the values of $1...;
// paramText, when not nil, supplies them as text to be parsed once their
// types are inferred.
func (s *Session) Exec(ctx context.Context, query string, paramText []*string) (*Result, error) {
	if st := ext.Parse(query); st.Kind != ext.None {
		if s.txn != nil && s.txn.state == txnFailed {
			return nil, errs.New(errs.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
		}
		return s.explainIncremental(st)
	}
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	if len(tree.Stmts) == 0 {
		return &Result{Tag: ""}, nil
	}
	if len(tree.Stmts) > 1 {
		return nil, errs.New(errs.SyntaxError, "cannot run several statements at once here; split them first")
	}
	raw := tree.Stmts[0]
	return s.execNode(ctx, query, raw.Stmt, paramText)
}

func parseError(err error) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		return &errs.Error{Code: errs.SyntaxError, SQLState: "42601", Message: pe.Message, Position: pe.Cursorpos}
	}
	return errs.New(errs.SyntaxError, err.Error())
}

func (s *Session) execNode(ctx context.Context, text string, n *pg.Node, paramText []*string) (*Result, error) {
	switch {
	case n.GetTransactionStmt() != nil:
		return s.execTransaction(n.GetTransactionStmt())
	}
	if s.txn != nil && s.txn.state == txnFailed {
		return nil, errs.New(errs.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	implicit := s.txn == nil
	if implicit {
		s.txn = &txn{}
	}
	res, err := s.dispatch(ctx, text, n, paramText)
	if implicit {
		if err == nil {
			err = s.commit()
		} else {
			s.rollback()
		}
		s.txn = nil
	} else if err != nil {
		s.txn.state = txnFailed
	}
	return res, err
}

func (s *Session) execTransaction(t *pg.TransactionStmt) (*Result, error) {
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		tag := "BEGIN"
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			tag = "START TRANSACTION"
		}
		if s.txn == nil {
			// Inside a block PostgreSQL warns and carries on.
			s.txn = &txn{block: true}
		}
		return &Result{Tag: tag}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		if s.txn == nil {
			return &Result{Tag: "COMMIT"}, nil
		}
		if s.txn.state == txnFailed {
			s.rollback()
			s.txn = nil
			return &Result{Tag: "ROLLBACK"}, nil
		}
		err := s.commit()
		s.txn = nil
		if err != nil {
			return nil, err
		}
		return &Result{Tag: "COMMIT"}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if s.txn != nil {
			s.rollback()
			s.txn = nil
		}
		return &Result{Tag: "ROLLBACK"}, nil
	}
	return nil, errs.Newf(errs.FeatureNotSupported, "%s is not supported", transactionKindName(t.Kind))
}

func transactionKindName(k pg.TransactionStmtKind) string {
	switch k {
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return "SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return "RELEASE SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return "ROLLBACK TO SAVEPOINT"
	case pg.TransactionStmtKind_TRANS_STMT_PREPARE, pg.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
		return "two-phase commit"
	}
	return "this transaction statement"
}

// beginWrite takes the write token for the session's transaction and
// returns its overlay.
func (s *Session) beginWrite(ctx context.Context) (*state.Overlay, error) {
	if s.txn.ov != nil {
		return s.txn.ov, nil
	}
	select {
	case s.eng.writeToken <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// With the token held nothing else commits, so the committed store and
	// catalog are stable until this transaction ends.
	s.eng.mu.RLock()
	s.txn.ov = state.NewOverlay(s.eng.mu.store)
	if s.txn.cat == nil {
		s.txn.cat = s.eng.mu.cat
	}
	s.eng.mu.RUnlock()
	return s.txn.ov, nil
}

func (s *Session) commit() error {
	t := s.txn
	if t.ov == nil {
		return nil
	}
	defer func() { <-s.eng.writeToken }()
	s.eng.mu.Lock()
	defer s.eng.mu.Unlock()
	if t.ov.Len() == 0 && t.cat == s.eng.mu.cat {
		// Nothing changed: no epoch.
		return nil
	}
	if err := t.ov.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.eng.mu.cat = t.cat
	s.eng.mu.epoch++
	return nil
}

func (s *Session) rollback() {
	t := s.txn
	if t.ov == nil {
		return
	}
	t.ov.Discard()
	t.ov = nil
	<-s.eng.writeToken
}

// readView returns the store and catalog a read in this session sees: the
// transaction's own writes when it has any, else the committed state, and
// a function to call when the read is done.
func (s *Session) readView() (state.Reader, *catalog, func()) {
	if s.txn != nil && s.txn.ov != nil {
		return s.txn.ov, s.txn.cat, func() {}
	}
	s.eng.mu.RLock()
	return s.eng.mu.store, s.eng.mu.cat, s.eng.mu.RUnlock
}

// writeStatement runs fn in a statement overlay over the transaction's,
// keeping its writes only when fn succeeds.
func (s *Session) writeStatement(ctx context.Context, fn func(st state.Store, cat *catalog) (*catalog, error)) error {
	tov, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	sov := state.NewOverlay(tov)
	cat, err := fn(sov, s.txn.cat)
	if err != nil {
		sov.Discard()
		return err
	}
	if err := sov.Commit(); err != nil {
		return err
	}
	if cat != nil {
		s.txn.cat = cat
	}
	return nil
}

func (s *Session) dispatch(ctx context.Context, text string, n *pg.Node, paramText []*string) (*Result, error) {
	switch {
	case n.GetSelectStmt() != nil:
		return s.execSelect(ctx, n, paramText)
	case n.GetInsertStmt() != nil:
		return s.execInsert(ctx, n.GetInsertStmt(), paramText)
	case n.GetUpdateStmt() != nil:
		return s.execUpdate(ctx, n.GetUpdateStmt(), paramText)
	case n.GetDeleteStmt() != nil:
		return s.execDelete(ctx, n.GetDeleteStmt(), paramText)
	case n.GetCreateStmt() != nil:
		return s.ddl(ctx, func(st state.Store, cat *catalog) (*catalog, *Result, error) {
			return createTable(cat, n.GetCreateStmt())
		})
	case n.GetCreateTableAsStmt() != nil:
		return s.ddl(ctx, func(st state.Store, cat *catalog) (*catalog, *Result, error) {
			return createMatView(st, cat, text, n.GetCreateTableAsStmt())
		})
	case n.GetViewStmt() != nil:
		return s.ddl(ctx, func(st state.Store, cat *catalog) (*catalog, *Result, error) {
			return createView(cat, text, n.GetViewStmt())
		})
	case n.GetDropStmt() != nil:
		return s.ddl(ctx, func(st state.Store, cat *catalog) (*catalog, *Result, error) {
			return drop(st, cat, n.GetDropStmt())
		})
	case n.GetExplainStmt() != nil:
		return nil, errs.New(errs.FeatureNotSupported, "EXPLAIN is not supported; use EXPLAIN INCREMENTAL")
	}
	return nil, errs.Newf(errs.FeatureNotSupported, "statement %s is not supported", stmtName(n))
}

// ddl runs a catalog change as its own transaction.
func (s *Session) ddl(ctx context.Context, fn func(st state.Store, cat *catalog) (*catalog, *Result, error)) (*Result, error) {
	if s.txn.block {
		return nil, errs.New(errs.FeatureNotSupported, "DDL inside a transaction block is not supported; run it outside BEGIN ... COMMIT")
	}
	var res *Result
	err := s.writeStatement(ctx, func(st state.Store, cat *catalog) (*catalog, error) {
		c, r, err := fn(st, cat)
		res = r
		return c, err
	})
	return res, err
}

// stmtName names a statement node's kind for error messages.
func stmtName(n *pg.Node) string {
	name := fmt.Sprintf("%T", n.GetNode())
	// *pg_query.Node_AlterTableStmt → AlterTableStmt
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '_' {
			name = name[i+1:]
			break
		}
	}
	return name
}

// outColumns converts plan columns to result columns.
func outColumns(cols []plan.Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// errPosition returns err's statement position and the *errs.Error
// carrying it, or 0.
func errPosition(err error, e **errs.Error) int {
	if errors.As(err, e) {
		return (*e).Position
	}
	return 0
}
