// Package runtime executes SQL statements against one RockStream instance:
// it keeps the catalog, stores table rows and view contents, evaluates DML,
// and runs every materialized view's circuit for each transaction's changes
// as one epoch.
//
// Invariants:
//   - One writer at a time. A transaction takes the write token at its first
//     write (or DDL) and keeps it until COMMIT or ROLLBACK, so writes are
//     serial and never conflict.
//   - All changes of a transaction go through an overlay of the committed
//     store: a statement runs in its own overlay over the transaction's,
//     which is committed into the transaction's only when the statement
//     succeeds. COMMIT applies the transaction's overlay to the committed
//     store in one step under the commit lock and advances the epoch by one
//     (a transaction that changed nothing takes no epoch),
//     so readers see either none or all of a transaction, in every view.
//   - After every committed epoch, each materialized view's stored contents
//     equal its query evaluated over the current contents of the relations
//     it reads (inside a transaction block, views catch up with the block's
//     table changes before any read and at COMMIT): view deltas are propagated in creation order, which is a
//     dependency order because a view can only read relations that existed
//     before it.
//   - Stored weights are positive: a table row or view row whose weight
//     reaches zero is deleted, and a negative weight is an internal error
//     that fails the statement.
//   - DDL is not allowed inside a transaction block; it is its own epoch.
//   - COPY ... FROM STDIN is one statement: its data is parsed completely
//     before it takes the write token, then its rows are inserted together
//     or not at all (copy.go).
//   - A subscription (SUBSCRIBE, COPY (SUBSCRIBE ...), a SUBSCRIBE cursor)
//     reads only committed epochs, whole and in commit order, from the
//     view's change log; it is woken by the commit notification that
//     commitEpoch closes, runs no goroutine of its own and never holds a
//     lock while it waits (subscribe.go).
package runtime
