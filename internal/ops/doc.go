// Package ops holds the incremental operators that a circuit (internal/diff)
// is made of: the linear ones (Filter, Project, Map, Union, Negate,
// TimeWindow, Unnest), Join, OuterJoin, SemiJoin (semi-, anti- and mark joins),
// Aggregate (and WindowedAggregate, which can release the state of closed
// event-time windows), Distinct, SetOp (INTERSECT, EXCEPT), TopK, Window,
// the Values source, and the Fixpoint of a recursive query, which runs a
// nested circuit (its Body) until nothing changes. IVM.md gives the delta
// rule each one implements. A Join may read one input by key from that
// relation's stored rows instead of arranging it (lookupjoin.go), and a
// LookupOuterJoin reads an outer join's nullable input, or a semi-, anti-
// or mark join's subquery input, so (lookupouter.go): the one read an
// operator makes outside its own prefix, of rows the caller has written
// before the step.
//
// Invariants:
//   - Purity. An operator is a deterministic function of its state (read
//     from the state.Store passed to Step, under the key prefix it was
//     built with) and this epoch's input deltas; it returns the output delta
//     and leaves its state writes in the store. It never starts goroutines,
//     reads clocks, sleeps or does I/O of its own. (A ParallelOperator's
//     instances on several workers meet only through the Exchange the
//     caller passes: barriers that combine their values or rows.) Running it twice from the
//     same state over the same input gives the same output and writes.
//   - Consolidated batches. Inputs are consolidated (each row once, sorted
//     by its key encoding, no zero weight) and outputs are too: an operator
//     never emits a row with weight 0.
//   - Inputs are read-only. An operator never modifies an input batch or
//     its rows (several operators may read the same scan delta); rows are
//     immutable once in a batch.
//   - State stays non-negative. For inputs whose accumulated weights are
//     non-negative (a table is a multiset), every stored weight
//     (arrangements, distinct counts, group counts) is non-negative after
//     each step, so a view's contents never hold a negative weight. A count
//     that would go negative is reported as an internal error.
//   - Failure is atomic by the caller. When Step returns an error (a
//     failing expression, an overflow) the operator may have written part
//     of its state; the caller runs each epoch in a state.Overlay and
//     discards it.
//   - Cancellation is an error like any other. Step's context is only
//     looked at, never waited on: between operators (diff.Circuit), at
//     every iteration of a Fixpoint, and every checkInterval units of work
//     (rows, keys, pairs, groups) inside a step's long loops, through
//     Interrupted and work.tick, sorts of a delta's keys included
//     (sortKeyRefsInterruptibly); the window and top-k operators
//     consolidate their output with zset.ConsolidateContext, which looks
//     at it as often. Once it is done the step returns its
//     error unwrapped and the caller discards the step's writes; while it
//     is not, it changes nothing of what a step computes.
//   - State keys. An operator writes only keys that start with its prefix
//     (Prefix) in the bucket of the key the state belongs to: the bucket of
//     the operator's routing key (group, join or partition key, whole row;
//     the empty key for an operator that runs alone), the key the circuit's
//     exchange routes its input by. So a worker's state is the buckets it
//     owns, and one bucket's state of a circuit is one key range. Keys use zset.EncodeKey (order-preserving), so a prefix scan visits a
//     join key's rows or a group's values in order, followed where exact
//     rows matter by zset.EncodeRow, which keeps every value's exact
//     representation (a NUMERIC's scale); weights are varints.
//
// The key and value layout of every operator's state is specified in
// state_format.md.
//
// Aggregate results have PostgreSQL's types (types.AggregateType) and
// values. Sums are kept exactly, so an incrementally maintained sum never
// drifts from the batch sum however rows come and go: integer sums in 128
// bits, NUMERIC sums as exact decimals (with the scale of the widest value
// present, so the scale shrinks back when that row leaves, as a batch
// evaluation would show), and REAL/DOUBLE PRECISION sums as the exact sum of
// the binary values, rounded once when the result is read, with NaN and
// ±Infinity counted apart so that they can be deleted again. PostgreSQL adds
// floats one at a time in scan order instead, so a float SUM or AVG may
// differ from PostgreSQL's in the last bits (either answer is as exact as
// the other; ours does not depend on the order of rows). An overflow when
// the result is read (a float sum beyond DOUBLE PRECISION, an integer sum
// beyond BIGINT for sum(integer)) fails the step.
//
// Rows of a Z-set are identified exactly (NUMERIC 1.0 and 1.00 are two
// rows), while keyed operators compare values with SQL's =. Where such an
// operator shows one of several equal values (DISTINCT, group values,
// MIN/MAX, DISTINCT aggregates, INTERSECT/EXCEPT rows, which come from the
// left input) it shows the smallest representation present by row
// encoding, which depends only on the current contents, so that
// incremental and batch results are identical (class.go). TopK and Window
// order rows equal on every ORDER BY key by their whole row, for the same
// reason.
//
// An operator keeps reusable scratch buffers, so one instance must not be
// stepped from two goroutines at once.
package ops
