// Package oracle checks RockStream against PostgreSQL: every materialized
// view must equal what PostgreSQL returns for the same query over the same
// data, as a multiset of rows in PostgreSQL's text format, after every
// statement.
//
// # How a comparison runs
//
// A Runner sends each statement of a script to two Engines: the
// reference (Postgres, a real PostgreSQL database) and the system under
// test (RockStream, an in-memory instance through the embedded API). Each
// engine has two sessions: one runs the script, the other (the observer)
// reads committed state. After each statement the Runner compares
//
//   - the statement's outcome: command tag, result columns (names and type
//     OIDs) and rows, or the failure and its SQLSTATE;
//   - unless the statement is a query, every view and materialized view
//     created so far, read with SELECT * through both observers, as
//     multisets.
//
// A query's rows are compared in order when it has a top-level ORDER BY
// (whose keys must then order the rows totally), as a multiset otherwise.
// A disagreement is a Finding, printed with the statement's location and
// a diff: the rows missing from RockStream and the extra rows in it.
//
// # How PostgreSQL stands in for materialized views
//
// PostgreSQL's own materialized views are only as fresh as their last
// REFRESH, so the reference turns CREATE MATERIALIZED VIEW into CREATE
// VIEW (always fresh) and DROP MATERIALIZED VIEW into DROP VIEW, keeping
// PostgreSQL's command tags and its refusal to drop a view of the other
// kind. It also enforces the rule of incremental maintenance: a change
// that makes a materialized view's query fail (overflow, division by zero)
// fails with that error and changes nothing. Outside a transaction block
// each change runs in its own transaction and every materialized view is
// evaluated before it commits; inside a block they are evaluated at
// COMMIT, which fails with the error: a transaction is the unit of
// change, and a failing state in the middle of a block that the block
// repairs before COMMIT is no error.
//
// An engine may report a failure at the statement that causes it rather
// than at COMMIT. The Runner accepts that when PostgreSQL's views fail the
// same way at that point, lets PostgreSQL go on with the block, and at
// COMMIT checks that PostgreSQL fails the block too: if it commits, the
// engine rejected a valid transaction, which is a finding.
//
// A view's difference is reported when it first appears and whenever it
// changes, not again after every statement while it stays the same.
//
// # Scripts
//
// testdata/*.sql are scripts: SQL statements separated by semicolons, in
// the order a reviewer reads them, with comments saying what each part
// tests. A comment line starting with "--!" before a statement is a
// directive:
//
//	--! error SQLSTATE            both must fail with SQLSTATE
//	--! rockstream-error SQLSTATE RockStream alone runs it and must fail so
//	                              (constructs it rejects by design)
//	--! unordered                 compare a query's rows as a multiset even
//	                              though it has ORDER BY
//	--! postgres SQL              PostgreSQL runs SQL in its place: the same
//	                              statement without RockStream's extensions
//	                              (TUMBLE, HOP, a table's lateness), or only
//	                              the rows a watermark admits (extensions.go)
//	--! rockstream-only           RockStream alone runs it and must succeed,
//	--! rows a|b|NULL             returning these rows in order
//
// Scripts run strict: a statement PostgreSQL rejects without an error
// directive is a mistake in the script, not a finding. TestScripts runs
// them against RockStream; TestScriptsPostgresSelf runs them with
// PostgreSQL on both sides, which checks the scripts and the harness
// without the engine. -oracle.scripts=GLOB runs other scripts.
//
// # Random workloads
//
// WorkloadGen (gen.go) generates schemas, views that combine and nest
// every construct of the query language the engine maintains (joins of
// every kind, aggregates, set operations, subqueries in FROM (LATERAL too)
// and in expressions, WITH [RECURSIVE], top-k, window functions, the function
// library and SQL functions each workload defines), and streams of changes whose evaluation cannot fail,
// but for the statements that violate a table's primary key on purpose
// (gen_keys.go), which are marked to fail with 23505 on both systems.
// TestRandomViews checks -oracle.cases of them (rapid); a failure prints
// rapid's seed and a minimal failing script, which runs as a script.
//
// The PostgreSQL server comes from internal/pgtest: one per test binary,
// a fresh database per script, a fresh schema per generated workload.
package oracle
