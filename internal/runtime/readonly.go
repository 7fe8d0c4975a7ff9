package runtime

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/session"
)

// Read-only transactions, as PostgreSQL has them. A transaction's access
// mode (transaction_read_only) starts as the session's
// default_transaction_read_only, and BEGIN READ ONLY | READ WRITE, SET
// TRANSACTION and SET transaction_read_only change it. In a read-only
// transaction every statement that writes fails with 25006 ("cannot
// execute INSERT in a read-only transaction", naming the statement as
// PostgreSQL does); reads, SET and SHOW run. SET SESSION CHARACTERISTICS
// AS TRANSACTION sets the default.

// newTxn starts a transaction (a block when block is set) in the
// session's default access mode.
func (s *Session) newTxn(block bool) *txn {
	return &txn{Txn: session.NewTxn(block, s.defaultReadOnly()), started: s.statementStart}
}

// defaultReadOnly is the access mode a new transaction has.
func (s *Session) defaultReadOnly() bool { return s.resolved().defaultReadOnly }

// readOnlyTxn reports whether t may not write: it is read-only, or it
// declared a SUBSCRIBE cursor.
func (t *txn) readOnlyTxn() bool { return t != nil && t.ReadOnly() }

// transactionModes applies the modes of BEGIN, START TRANSACTION or SET
// TRANSACTION to the open transaction. Isolation levels change nothing:
// writing transactions are serializable whatever is asked.
func (s *Session) transactionModes(modes []*pg.Node) error {
	for _, m := range modes {
		d := m.GetDefElem()
		if d == nil || d.Defname != "transaction_read_only" {
			continue
		}
		if err := s.setTransactionReadOnly(d.Arg.GetAConst().GetIval().GetIval() != 0); err != nil {
			return err
		}
	}
	return nil
}

// setTransactionReadOnly sets the open transaction's access mode, with
// PostgreSQL's checks: a read-only transaction becomes read-write only
// before its first query and outside savepoints (25001). Outside a
// transaction there is nothing to set.
func (s *Session) setTransactionReadOnly(readOnly bool) error {
	t := s.txn
	if t == nil {
		return nil
	}
	return t.SetAccessReadOnly(readOnly, len(t.savepoints) > 0)
}

// transactionReadOnlySetting is SHOW transaction_read_only: the open
// transaction's access mode, or outside one the mode the next will have.
func (s *Session) transactionReadOnlySetting() string {
	if s.txn == nil {
		return s.Setting("default_transaction_read_only")
	}
	return session.BoolText(s.txn.AccessReadOnly())
}

// setMulti runs SET TRANSACTION ... and SET SESSION CHARACTERISTICS AS
// TRANSACTION ...: the first changes the open block's modes (outside one
// it only warns, as in PostgreSQL), the second the session's defaults.
func (s *Session) setMulti(v *pg.VariableSetStmt) (*Result, error) {
	switch strings.ToUpper(v.Name) {
	case "TRANSACTION":
		if s.txn == nil || !s.txn.Block() {
			s.notice("WARNING", errs.NoActiveTransaction, "SET TRANSACTION can only be used in transaction blocks")
			return &Result{Tag: "SET"}, nil
		}
		if err := s.transactionModes(v.Args); err != nil {
			return nil, err
		}
	case "SESSION CHARACTERISTICS":
		for _, m := range v.Args {
			if d := m.GetDefElem(); d != nil && d.Defname == "transaction_read_only" {
				s.settings.Put("default_transaction_read_only", session.BoolText(d.Arg.GetAConst().GetIval().GetIval() != 0))
			}
		}
	}
	return &Result{Tag: "SET"}, nil
}
