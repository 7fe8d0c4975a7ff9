package runtime

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/errs"
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
	return &txn{block: block, accessReadOnly: s.Setting("default_transaction_read_only") == "on"}
}

// readOnlyTxn reports whether t may not write: it is read-only, or it
// declared a SUBSCRIBE cursor.
func (t *txn) readOnlyTxn() bool { return t != nil && (t.readOnly || t.accessReadOnly) }

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
	if !readOnly && t.accessReadOnly {
		if len(t.savepoints) > 0 {
			return errs.New(errs.ActiveTransaction, "cannot set transaction read-write mode inside a read-only transaction")
		}
		if t.queried {
			return errs.New(errs.ActiveTransaction, "transaction read-write mode must be set before any query")
		}
	}
	t.accessReadOnly = readOnly
	return nil
}

// transactionReadOnlySetting is SHOW transaction_read_only: the open
// transaction's access mode, or outside one the mode the next will have.
func (s *Session) transactionReadOnlySetting() string {
	if s.txn == nil {
		return s.Setting("default_transaction_read_only")
	}
	return boolSettingText(s.txn.accessReadOnly)
}

// setMulti runs SET TRANSACTION ... and SET SESSION CHARACTERISTICS AS
// TRANSACTION ...: the first changes the open block's modes (outside one
// it only warns, as in PostgreSQL), the second the session's defaults.
func (s *Session) setMulti(v *pg.VariableSetStmt) (*Result, error) {
	switch strings.ToUpper(v.Name) {
	case "TRANSACTION":
		if s.txn == nil || !s.txn.block {
			s.notice("WARNING", errs.NoActiveTransaction, "SET TRANSACTION can only be used in transaction blocks")
			return &Result{Tag: "SET"}, nil
		}
		if err := s.transactionModes(v.Args); err != nil {
			return nil, err
		}
	case "SESSION CHARACTERISTICS":
		for _, m := range v.Args {
			if d := m.GetDefElem(); d != nil && d.Defname == "transaction_read_only" {
				if s.settings == nil {
					s.settings = map[string]string{}
				}
				s.settings["default_transaction_read_only"] = boolSettingText(d.Arg.GetAConst().GetIval().GetIval() != 0)
			}
		}
	}
	return &Result{Tag: "SET"}, nil
}

// boolSettingText is how a boolean setting shows.
func boolSettingText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// parseBoolSetting reads a boolean setting's value as PostgreSQL's
// parse_bool does: on, off, true, false, yes, no, 1, 0 and their
// unambiguous prefixes, in any case.
func parseBoolSetting(v string) (bool, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return false, false
	}
	for _, w := range []struct {
		word string
		val  bool
		min  int
	}{{"true", true, 1}, {"false", false, 1}, {"yes", true, 1}, {"no", false, 1}, {"on", true, 2}, {"off", false, 2}, {"1", true, 1}, {"0", false, 1}} {
		if len(v) >= w.min && strings.HasPrefix(w.word, v) {
			return w.val, true
		}
	}
	return false, false
}
