// Package crashtest checks RockStream's durability promise under abrupt
// process death: nothing acknowledged is lost, nothing is applied twice,
// no transaction is ever partly visible, and every materialized view
// recovered from disk equals its query over the recovered tables.
//
// TestCrashRecovery runs a writer process (the test binary re-executed in
// child mode) against one storage directory and kills it with SIGKILL at
// random moments — while it opens and recovers the store, while it creates
// the schema, and in the middle of bursts of concurrent transactions — then
// restarts it on the same directory, again and again. After every kill the
// test opens the directory itself and checks it.
//
// # The workload
//
// Several goroutines, each with its own session, run random transactions
// over three tables (one keyed, one without a key, one with a composite
// key; numeric, integer and text columns, NULLs) read by materialized
// views: grouped aggregates (count, sum, avg, min, max, count distinct), a
// two-way join, a join with an aggregate, a view over a materialized view,
// a view over a plain view, and a DISTINCT. A further view is created and
// dropped now and then while the writers run, so that kills also land on
// DDL. A transaction is a single autocommit statement (the group committer
// batches those of several sessions into one epoch) or a BEGIN ... COMMIT
// block of several statements; some blocks are rolled back on purpose and
// some contain a statement that fails, which turns their COMMIT into a
// rollback.
//
// Writer w owns the rows whose w column is w, so its transactions never
// touch another writer's rows: what it owns is a function of its own
// committed transactions, in the order it ran them. Each transaction has a
// unique id, stored in every row it writes (the txn column) and, for a
// block, in txn_log in the same transaction.
//
// # The journal
//
// The child appends to a journal file: an intent record (the transaction's
// id, shape and operations) before the transaction starts, and an ack
// record (fsynced, with the epoch the engine reports) once COMMIT has
// returned success, or a nack record once it has failed or rolled back as
// intended. A writer runs one transaction at a time, so at a kill each
// writer has at most one transaction in doubt: its intent is journalled
// but its outcome is not.
//
// # What a check proves
//
// The test replays each writer's journal on a model of the rows it owns.
// After a kill, the rows the recovered store holds for writer w must equal
// the model with every acknowledged transaction applied and every
// rolled-back or failed one left out, with the transaction in doubt either
// applied whole or not at all. That single comparison proves:
//
//  1. durability: every acknowledged transaction is present, its id in
//     txn_log exactly once, and every row it wrote is there;
//  2. atomicity: no row carries the id of a transaction that was not
//     committed, and a committed transaction's rows are all present — a
//     torn epoch shows as a mismatch against both candidates;
//  3. no double application: a replayed epoch would duplicate rows of the
//     key-less table or double an increment.
//
// Then db.VerifyViews() must return nil, every materialized view must
// equal its query run ad hoc over the recovered tables, the schema must be
// a prefix of the DDL the child ran (each DDL statement commits alone),
// and the recovered epoch must be at least every epoch the child saw
// acknowledged and at least the epoch of the previous recovery: epochs
// never go backwards. Two further checks reach the state views do not
// show: every view read AS OF the previous recovery's epoch must equal
// what it held then (the change logs were recovered with the views), and
// deleting every row of every table, in a block that is rolled back, must
// leave every view empty (each operator's recovered state retracts
// exactly what the tables hold).
//
// TestWorkloadModel runs the same workload without kills, in memory and on
// a store that is closed and reopened, and applies the same checks: it
// shows that the model agrees with the engine, so that a mismatch after a
// kill is the crash's doing.
//
// Run a longer campaign with
//
//	go test ./internal/crashtest/ -run TestCrashRecovery -crashtest.kills=1000 -timeout 0
//
// and replay the random choices of a failed run with -crashtest.seed (kill
// timing depends on the machine, so a replay is likely but not certain to
// fail the same way).
package crashtest
