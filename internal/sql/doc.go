// Package sql binds parsed SQL (pg_query's AST) against the catalog and
// builds logical plans (internal/plan), with PostgreSQL 15's semantics:
// name resolution, type resolution, output column names and error
// messages (with SQLSTATE and statement position) are PostgreSQL's.
//
// Binding a query follows PostgreSQL's order of analysis (FROM, the
// select list, WHERE, HAVING, ORDER BY, GROUP BY, DISTINCT, LIMIT), so
// that the first error reported and the parameter types inferred are the
// ones PostgreSQL would give. Expressions are bound over the row of the
// FROM clause; the FROM clause is planned afterwards (join.go), which
// renumbers those expressions to the planned row.
//
// Invariants of every plan the binder returns:
//
//   - It is fully typed: every operator is resolved, every implicit
//     conversion is an explicit plan.Cast, no expression has type Unknown
//     (a literal whose type no context decides is text; a parameter whose
//     type cannot be inferred is an error), and no aggregate placeholder
//     is left.
//   - It computes exactly what PostgreSQL computes, as a multiset. A
//     construct the engine cannot compute exactly fails at bind time with
//     0A000 naming it; nothing is approximated. Expressions are
//     deterministic: volatile functions are rejected, except where the
//     Binder supplies what they read (the statement's Clock for now(),
//     the session's Random for random(), never in a view's query), and
//     what depends on the session time zone is bound with Binder.Zone.
//   - Constants are folded where PostgreSQL folds them: literals are
//     parsed as their resolved type, and casts of constants are applied,
//     at bind time (so their errors are the statement's).
//   - Sort and Limit appear only at the top, for the statement's own
//     ORDER BY/LIMIT/OFFSET; a Project above them may drop hidden sort
//     columns. Inside subqueries, views and WITH queries ORDER BY is
//     checked and dropped (a relation has no order), unless LIMIT or
//     OFFSET picks rows by it: then they are a TopK. DISTINCT ON is a TopK
//     of one row per group, and a filter bounding ROW_NUMBER() by constants
//     turns its Window into a TopK with row numbers.
//   - Window functions are computed by Window nodes (one per distinct
//     PARTITION BY and ORDER BY) above the FROM clause or the Aggregate,
//     below DISTINCT, ORDER BY and LIMIT.
//   - Join keys pair expressions of the same type; the left key reads the
//     left input's row and the right key the right input's. Filters sit as
//     low as their columns allow (WHERE and inner-join ON conditions are
//     pushed to the inputs they read, conditions on group keys below the
//     Aggregate), and a group of inner joins is ordered so that each join
//     has an equality key when the query has one.
//   - Subqueries in expressions (EXISTS, IN, ANY/ALL, scalar subqueries)
//     and LATERAL subqueries in FROM are decorrelated into joins
//     (subquery.go, lateral.go): no plan holds a subquery or a reference
//     to an enclosing query's row.
//   - Calls of SQL functions (CREATE FUNCTION ... LANGUAGE SQL) are
//     inlined (functions.go): no plan holds one; Binder.UsedFunctions
//     lists the functions a plan depends on.
//   - Inline views and WITH queries are expanded at every reference;
//     tables and materialized views are plan.Scan nodes named as the
//     catalog names them.
//
// The binder does no I/O and keeps no state between calls other than the
// parameter types it records in Binder.ParamTypes.
package sql
