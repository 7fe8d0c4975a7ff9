// Package clients checks RockStream against the PostgreSQL clients people
// already use: psql, pgcli, psycopg2, psycopg 3, node-postgres, pgJDBC,
// pgx and lib/pq. Each test starts a fresh `rockstream start` (the real
// binary, built once per run) and runs one scripted scenario with the real
// client program: connect, DDL, parameterized DML through prepared
// statements, a committed and a rolled-back transaction, a view read, COPY
// in and out, SUBSCRIBE reading a change, and an error that leaves the
// session usable. Every scenario asserts its results; a failed assertion
// fails the test.
//
// The scenarios live in testdata/ and are written so that they also run
// against PostgreSQL itself (with a plain view instead of a materialized
// one and without SUBSCRIBE): `go test ./internal/clients
// -clients.target=postgres` checks the scenarios' own expectations against
// the reference.
//
// A client program that is not installed skips its test, unless
// ROCKSTREAM_REQUIRE_CLIENTS=1 (set by .ci/run, which installs them).
package clients
