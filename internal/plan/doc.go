// Package plan defines RockStream's logical plans: relational operator trees
// (Scan, Filter, Project, Join, Aggregate, Distinct, Union, SetOp, TopK,
// Window, Values, Sort, Limit) over typed scalar expressions.
//
// Invariants:
//   - Every node's Columns() is fixed when the node is built; column i of a
//     node is referred to by ColRef{Index: i} in the expressions of the node
//     directly above it.
//   - Expressions are fully typed: implicit casts are explicit Cast nodes and
//     operators are resolved (types.Operator), so evaluation never resolves
//     types at run time.
//   - Expressions are deterministic; a plan never contains a volatile
//     function.
//
// Plans are pure data. The differentiation pass (internal/diff) turns a plan
// into an incremental circuit; the same circuit run once over the whole
// input answers an ad-hoc query.
package plan
