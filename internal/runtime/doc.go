// Package runtime executes SQL statements against one RockStream instance:
// it keeps the catalog, stores table rows and view contents, evaluates DML,
// and runs every materialized view's circuit for each transaction's changes
// as one epoch.
//
// Two neighbours hold what does not depend on the engine. internal/session
// keeps a session's state: its transaction's state (block, failed, access
// mode), settings, cursors and SQL prepared statements; a Session here
// holds one of each and runs statements against the engine with them,
// keeping what a transaction wrote, its savepoints' layers and the write
// token. internal/pgcatalog projects the catalog into pg_catalog and
// information_schema; the runtime describes its catalog to it as a
// pgcatalog.Source (systemcatalog.go) and binds a session's queries
// against the projection.
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
//   - Circuits step on the engine's workers (Options.Workers): a step of
//     at least Options.ParallelMinRows input rows is split between them
//     (diff.Circuit.StepParallel), each worker writing its own overlay of
//     the epoch's, and the overlays are applied to the epoch before the
//     view's delta is, so the epoch still commits as one batch. A table
//     write of as many rows is split between the workers by bucket
//     (splitwrite.go), and the views take its delta with that split
//     (diff.Circuit.StepRouted). On more than one worker, views that
//     read none of each other's outputs step concurrently, each in an
//     overlay of its own committed in creation order (viewgroups.go),
//     and a table write too small to split stores its rows beside its
//     views' steps (tablebeside.go); either reports the error a serial
//     run would. The store
//     an epoch writes does not depend on the number of workers
//     (workers_test.go).
//   - Every stored table row, view row and change-log entry has the
//     bucket of its row's routing key right after its object's id
//     (keys.go), so one bucket of one object is one key range; readers
//     that return rows in key order merge the buckets, on the engine's
//     workers when the read is large (storedscan.go), with the same
//     result for any number of workers. The store records
//     its layout version, and Open upgrades an older layout before
//     anything else reads it (layout.go).
//   - Every index (CREATE INDEX, index.go) holds exactly one entry per
//     distinct stored row of its relation, with the row's weight and
//     value, after every statement: the delta a statement writes to a
//     table's rows or a view's contents is written to their indexes in
//     the same overlay (indexwrite.go). Reads through an index, like
//     reads by key, only bound the rows read; the predicate is evaluated
//     on each (indexscan.go, indexjoin.go).
//   - Stored weights are positive: a table row or view row whose weight
//     reaches zero is deleted, and a negative weight is an internal error
//     that fails the statement.
//   - DDL is transactional. A catalog change is a statement of the epoch
//     being built: it writes its catalog records into the transaction's
//     overlay and installs the new catalog as the epoch's catalog, which
//     the transaction's later statements bind against; the engine's
//     catalog changes only when the epoch commits, together with the
//     writes, so a rolled-back block leaves no object, state or id behind.
//     Inside a block, pending table changes reach the views before a
//     catalog change, so that a view created in the block backfills from
//     its inputs exactly once and a dropped relation takes its pending
//     changes with it.
//   - A Query message of several statements runs in one implicit block
//     (implicit.go): a block in every respect while the message runs, ended
//     by EndMessage, which commits it or, after an error, rolls it back.
//     Any statement error fails the open block, explicit or implicit; a
//     rollback also undoes the block's SETs (session.Settings).
//   - COPY ... FROM STDIN is one statement: its data is parsed completely
//     before it takes the write token, then its rows are inserted together
//     or not at all (copy.go).
//   - A statement stops when its context ends (cancel.go): evaluation
//     looks at the context between a circuit's operators, at every
//     iteration of a recursive query, every few thousand units of work
//     inside an operator's long loops, and while scanning a relation. A
//     statement is atomic under cancellation: it stops with an error and
//     its statement overlay is discarded, so it leaves nothing behind (a
//     view being created leaves no catalog entry and no state), or it
//     completed and is kept whole. Inside a transaction block a canceled
//     statement fails the block, as any error does. An autocommit
//     statement canceled while queued for the group committer withdraws
//     and never runs; once the committer has run it into an epoch, it
//     commits or fails with that epoch, wholly, and its caller is told
//     which. COMMIT stopped while it brings the block's views up to date
//     rolls the whole block back.
//   - A subscription (SUBSCRIBE, COPY (SUBSCRIBE ...), a SUBSCRIBE cursor)
//     reads only committed epochs, whole and in commit order, from the
//     view's change log; it is woken by the commit notification that
//     commitEpoch closes, runs no goroutine of its own and never holds a
//     lock while it waits (subscribe.go).
//   - In shard mode (Options.Shard, shard.go) the engine is one member of
//     a cluster running the same statements in the same order: the
//     catalog is whole, tables and views keep the rows of the buckets
//     the member owns, every write statement is an epoch of its own on
//     every member (committed or failed on all of them alike), and every
//     materialized view steps in every epoch over the exchange mesh, its
//     output routed to the owners of its rows' buckets. Reads return the
//     member's part; what would need the other members' rows is refused.
//     A Gather over the members answers any ad-hoc SELECT at their
//     common epoch, as one node holding every row would (gather.go).
package runtime
