// Package diff is the differentiation pass: it turns a logical plan into an
// incremental circuit of operators by the DBSP rules of IVM.md.
//
// Each plan node becomes one operator (internal/ops): Scan is the input
// delta of its relation, Filter and Project are linear, an inner Join is a
// Join over two arrangements, an outer join an OuterJoin, a semi-, anti- or
// mark join a SemiJoin, Aggregate, Distinct and SetOp keep per-group and
// per-row state, TopK and Window keep a sorted arrangement, Union is a sum,
// and Values emits its rows on the first step. Sort alone is dropped (a
// view is an unordered multiset); a Limit (over a Sort or not) is the TopK
// it computes; Sort and Limit at the top of an ad-hoc query are left to the
// caller. TimeWindow is a flat map; an Aggregate grouped by a window of a
// stored relation becomes a WindowedAggregate, whose closed windows
// ReleaseClosedWindows drops (timewindow.go). A Recursive query becomes a
// Fixpoint whose inputs are its non-recursive term and the side inputs of
// its recursive term, and which runs the recursive term's spine as a
// nested circuit built under its own prefix (recursive.go).
//
// Invariants:
//   - Operators are numbered in post-order (inputs before the node that
//     reads them), which is also the order Step runs them in; an operator's
//     state lives under the circuit's prefix, the bucket of each state
//     key's routing key (ops.Prefix) and the operator's number, four
//     bytes big-endian: circuit prefix | bucket | number | own keys. The
//     same plan always gets the same numbers, so a
//     circuit rebuilt after a restart finds its state.
//   - Every batch passed between operators is consolidated; Step's result
//     is consolidated.
//   - Observing a circuit changes nothing (observe.go): Operators reads
//     what Build fixed and per-operator counters of the rows each
//     operator emitted, which the worker instances share and add to
//     atomically, so it may run while the circuit steps.
//   - Incremental equals batch: for any sequence of input deltas, the sum
//     of Step's outputs equals the output of one Step, on an empty store,
//     over the sum of the inputs. The property tests check this.
//   - A plan node the pass cannot maintain exactly fails Build with 0A000;
//     nothing is maintained approximately.
//   - Any number of workers gives the same step (workers.go, exchange.go):
//     StepParallel's output, error and state writes equal Step's, byte
//     for byte. Every stateful operator either keys its state by a key the
//     exchange before it routes by (so each key's rows and state belong to
//     one worker), or is single (its inputs gathered on the worker owning
//     the bucket of the empty key, which holds its state and alone runs
//     it), or is a recursive query's Fixpoint, whose
//     instances keep each row's state on the row's owner and iterate
//     together; operator state is stored under the data's key, never
//     under a worker. A global operator that splits is a partial
//     operator of the first kind (or stateless) and a single final one
//     in every circuit Build returns, whatever number of workers it steps
//     on. StepRouted, given inputs already split by bucket, equals
//     StepParallel too (routed.go). The golden scripts run every step on
//     2, 3 and 8 workers too, also over inputs split by bucket of the
//     whole row and of the first column, and the property tests draw the
//     number.
//   - A step across processes (mesh.go, Parallelism.Peers) equals Step
//     too: the members' outputs sum to its output, and each member
//     writes exactly its writes to the buckets the member owns, into a
//     store holding only those; on an error anywhere no member writes.
package diff
