package session

import "github.com/rockstream/rockstream/internal/errs"

// Txn is an open transaction as the session sees it: whether it is a
// transaction block, whether it failed, and its access mode. What it
// wrote is the engine's. The engine starts one for every statement
// outside a block (autocommit) and for every block: an explicit BEGIN
// ... COMMIT, or the implicit block of a Query message of several
// statements, which ends with the message.
//
// The states: open, or failed after a statement's error, when only the
// block's end (and ROLLBACK TO SAVEPOINT) is accepted.
type Txn struct {
	block, implicit bool
	failed          bool
	// subscribed is set when the block declared a SUBSCRIBE cursor: such
	// a block reads committed epochs as they come and may not write.
	subscribed bool
	// accessReadOnly is the transaction's access mode, PostgreSQL's
	// transaction_read_only: set by BEGIN READ ONLY, SET TRANSACTION
	// READ ONLY or default_transaction_read_only.
	accessReadOnly bool
	// queried is set once a statement other than SET, SHOW or a
	// transaction statement has run in the transaction: it can no longer
	// become read-write.
	queried bool
}

// NewTxn starts a transaction, a block when block is set, in the access
// mode readOnly (the session's default_transaction_read_only).
func NewTxn(block, readOnly bool) Txn { return Txn{block: block, accessReadOnly: readOnly} }

// NewImplicitBlock starts the implicit block of a Query message.
func NewImplicitBlock(readOnly bool) Txn {
	return Txn{block: true, implicit: true, accessReadOnly: readOnly}
}

// Block reports whether t is a transaction block, explicit or implicit.
func (t *Txn) Block() bool { return t.block }

// Implicit reports whether t is the implicit block of a Query message.
func (t *Txn) Implicit() bool { return t.implicit }

// Explicit reports whether t is a block opened by BEGIN.
func (t *Txn) Explicit() bool { return t.block && !t.implicit }

// BeginExplicit makes the implicit block of a message an explicit one,
// as BEGIN does in the middle of a message: the statements before it
// join the block.
func (t *Txn) BeginExplicit() { t.implicit = false }

// Failed reports whether a statement of t failed.
func (t *Txn) Failed() bool { return t.failed }

// Fail marks t failed: a block then accepts only its end.
func (t *Txn) Fail() { t.failed = true }

// Recover ends the failed state, as ROLLBACK TO SAVEPOINT does.
func (t *Txn) Recover() { t.failed = false }

// Queried records that a statement other than SET, SHOW or a transaction
// statement ran in t.
func (t *Txn) Queried() { t.queried = true }

// Subscribed records that t declared a SUBSCRIBE cursor.
func (t *Txn) Subscribed() { t.subscribed = true }

// ReadOnly reports whether t may not write: it is read-only, or it
// declared a SUBSCRIBE cursor.
func (t *Txn) ReadOnly() bool { return t.subscribed || t.accessReadOnly }

// AccessReadOnly reports t's access mode (transaction_read_only).
func (t *Txn) AccessReadOnly() bool { return t.accessReadOnly }

// SetAccessReadOnly sets t's access mode, with PostgreSQL's checks: a
// read-only transaction becomes read-write only before its first query
// and outside savepoints (25001). inSavepoint says whether a savepoint
// is set.
func (t *Txn) SetAccessReadOnly(readOnly, inSavepoint bool) error {
	if !readOnly && t.accessReadOnly {
		if inSavepoint {
			return errs.New(errs.ActiveTransaction, "cannot set transaction read-write mode inside a read-only transaction")
		}
		if t.queried {
			return errs.New(errs.ActiveTransaction, "transaction read-write mode must be set before any query")
		}
	}
	t.accessReadOnly = readOnly
	return nil
}
